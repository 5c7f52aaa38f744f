"""HTTP mode: the Bolt app as a WSGI application at ``/slack/events``.

Production runs it under gunicorn (see the Procfile: ``gunicorn 'bot.http:create_wsgi()'``);
``python -m bot serve`` uses a small threaded server, enough for one team and for development.
"""

import logging
import socketserver
import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import redis
from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler

from bot.app import build_app
from bot.services import build_services
from bot.settings import ConfigError, load_settings

logger = logging.getLogger(__name__)

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def wsgi_app(app: App, *, path: str = "/slack/events") -> WsgiApp:
    """Serve ``app`` at ``path`` (Events API, interactivity and slash commands share it); 404 elsewhere."""
    handler = SlackRequestHandler(app, path=path)

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/healthz":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
        return handler(environ, start_response)

    return application


def create_wsgi() -> WsgiApp:
    """Factory for gunicorn: settings from the environment, ``REDIS_URL`` required (the worker runs apart)."""
    settings = load_settings("http")
    if not settings.redis_url:
        raise ConfigError("REDIS_URL is not set: under gunicorn the web and worker processes must share a Redis")
    services = build_services(settings, redis_client=redis.Redis.from_url(settings.redis_url))
    return wsgi_app(build_app(settings, services))


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = 128


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        logger.debug(format, *args)


def serve(app: App, *, port: int, stop: threading.Event, host: str = "0.0.0.0") -> None:
    """Serve until ``stop`` is set."""
    server = make_server(host, port, wsgi_app(app), server_class=_ThreadingServer, handler_class=_QuietHandler)
    logger.info("listening on http://%s:%d/slack/events", host, server.server_port)
    thread = threading.Thread(target=server.serve_forever, name="http", daemon=True)
    thread.start()
    stop.wait()
    server.shutdown()
    server.server_close()
