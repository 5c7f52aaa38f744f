"""The web process gunicorn runs (the Procfile: ``gunicorn 'bot.cli.web:create_wsgi()'``): services, then app."""

from bot import preflight
from bot.observe import trace_export
from bot.observe.exposition import WsgiApp
from bot.services import Services
from bot.settings import ConfigError, Settings, load_settings
from bot.slack.edge.http import guarded_wsgi_app


def create_wsgi() -> WsgiApp:
    """Factory for gunicorn: settings from the environment, ``REDIS_URL`` required (the worker runs apart)."""
    settings = load_settings("http")
    if settings.traces:
        trace_export.install("web")
    return web_app(settings)


def web_app(settings: Settings) -> WsgiApp:
    """What gunicorn's workers serve, built once Redis answers and Slack takes the token.

    Raises:
        ConfigError: A setting is unusable (``REDIS_URL`` unset or not answering, a token Slack refuses...).
        PolicyError: The policy file is.
    """
    if not settings.redis_url:
        raise ConfigError("REDIS_URL is not set: under gunicorn the web and worker processes must share a Redis")
    client = preflight.answering_redis(settings, url=settings.redis_url)
    preflight.check_shards(client, settings.redis_shards)
    preflight.warn_on_full_coverage(client)
    services = Services(settings, redis_client=client)
    preflight.check_slack(settings, socket_mode=False)
    return guarded_wsgi_app(settings, services)
