"""Startup checks: Redis answers and Slack takes the tokens, or the process ends with one message.

Run before anything is served, so a wrong URL or a revoked token is a line naming the variable
and where to get it (exit status 2), not a traceback or a bot that starts and then fails every
request.
"""

import logging
from typing import Final
from urllib.parse import urlsplit

import redis
from pydantic import SecretStr
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.services import DEFAULT_RETRY_S, connect_configured_redis, connect_redis
from bot.settings import ConfigError, Settings, how_to_get, redis_url_problem
from bot.store.layout import recorded_shards
from state.store import use_shards

logger = logging.getLogger(__name__)

_TIMEOUT_S: Final = 10
_FULL_COVERAGE: Final = "cluster-require-full-coverage"


def operator_redis(settings: Settings, *, unset: str) -> redis.Redis:
    """The Redis of an operator command (``pending``, ``audit export``): set, well formed and answering.

    Raises:
        ConfigError: ``unset`` when ``REDIS_URL`` is not set, else what is wrong with it.
    """
    if not settings.redis_url:
        raise ConfigError(unset)
    problem = redis_url_problem(settings.redis_url)
    if problem is not None:
        raise ConfigError(problem)
    use_shards(settings.redis_shards)
    client = answering_redis(settings, url=settings.redis_url)
    check_shards(client, settings.redis_shards)
    return client


def answering_redis(settings: Settings, *, url: str) -> redis.Redis:
    """A client of ``url`` (``REDIS_URL``) with the settings' retry and timeout, once Redis answers a PING there.

    Raises:
        ConfigError: Naming ``REDIS_URL``: nothing answers there (a cluster client asks for the layout at once).
    """
    try:
        client = connect_configured_redis(settings)
    except _UNUSABLE as error:
        raise _unusable(url, error) from None
    check_redis(client, url=url)
    return client


def check_redis(client: redis.Redis, *, url: str) -> None:
    """Raise ``ConfigError`` naming ``REDIS_URL`` unless Redis at ``url`` answers a PING."""
    try:
        client.ping()
    except _UNUSABLE as error:
        raise _unusable(url, error) from None


_UNUSABLE: Final = (redis.ConnectionError, redis.TimeoutError, redis.ResponseError)
"""What a Redis that cannot be used answers: refused or silent (a cluster's nodes too), or a command refused."""


def _unusable(url: str, error: Exception) -> ConfigError:
    return ConfigError(
        f"REDIS_URL: cannot use Redis at {_without_password(url)} ({type(error).__name__}: {error}): "
        f"it is {how_to_get('REDIS_URL')}."
    )


def reachable_redis(url: str) -> redis.Redis:
    """A client of the Redis at ``url`` (``REDIS_URL``) once it is well formed and answers.

    Raises:
        ConfigError: One message naming ``REDIS_URL``: what is wrong with it, or that nothing answers there.
    """
    problem = redis_url_problem(url)
    if problem is not None:
        raise ConfigError(problem)
    client = connect_redis(url, retry_s=DEFAULT_RETRY_S, cluster="no")
    check_redis(client, url=url)
    return client


def check_shards(client: redis.Redis, shards: int) -> None:
    """Raise ``ConfigError`` naming ``REDIS_SHARDS`` unless the data in Redis was written with ``shards`` shards."""
    recorded = recorded_shards(client, shards)
    if recorded != shards:
        raise ConfigError(
            f"REDIS_SHARDS: this Redis holds Signoff's data spread over {recorded} shards, but REDIS_SHARDS is "
            f"{shards}: no session, queue or index would be found. Set REDIS_SHARDS={recorded} in every process "
            "(changing it on existing data is not supported)."
        )


def full_coverage_warning(client: redis.Redis) -> str | None:
    """What to tell the operator when one master's failover would stop every shard of the cluster, else ``None``.

    With Redis' default ``cluster-require-full-coverage yes`` every master refuses every command from the moment a
    master is marked failed until its replica is promoted (docs/redis.md). Not an error: the bot works, it only
    loses the healthy shards' service for that moment. A server that refuses ``CONFIG`` (a managed service) is
    not asked again.
    """
    if not isinstance(client, redis.RedisCluster):
        return None
    try:
        answers = client.config_get(_FULL_COVERAGE, target_nodes=redis.RedisCluster.PRIMARIES)
    except redis.RedisError:
        return None
    if _FULL_COVERAGE in answers:  # one master: redis-py hands back its answer alone, not by node
        answers = {"its master": answers}
    requiring = sorted(node for node, answer in answers.items() if answer.get(_FULL_COVERAGE) == "yes")
    if not requiring:
        return None
    return (
        f"{_FULL_COVERAGE} is yes on {', '.join(requiring)}: while one master fails over, every shard refuses "
        f"every command. Set {_FULL_COVERAGE} no on every node (docs/redis.md#redis-cluster)."
    )


def warn_on_full_coverage(client: redis.Redis) -> None:
    """Log ``full_coverage_warning`` once at start, when there is one."""
    warning = full_coverage_warning(client)
    if warning is not None:
        logger.warning(warning)


def check_slack(settings: Settings, *, socket_mode: bool) -> None:
    """Raise ``ConfigError`` naming the variable unless Slack answers and takes the bot (and app) token."""
    if settings.slack_bot_token is not None:
        _ask(settings, settings.slack_bot_token, "auth.test", variable="SLACK_BOT_TOKEN")
    if socket_mode and settings.slack_app_token is not None:
        _ask(settings, settings.slack_app_token, "apps.connections.open", variable="SLACK_APP_TOKEN")


def _ask(settings: Settings, token: SecretStr, method: str, *, variable: str) -> None:
    api_url = settings.slack_api_url
    # Its own logger, silenced: the failure is reported once, below, not also as slack_sdk's error line.
    quiet = logging.getLogger(f"{__name__}.slack")
    quiet.setLevel(logging.CRITICAL)
    client = WebClient(token=token.get_secret_value(), base_url=api_url, timeout=_TIMEOUT_S, logger=quiet)
    try:
        client.api_call(method)
    except SlackApiError as error:
        code = error.response.get("error") if isinstance(error.response.data, dict) else error.response.status_code
        raise ConfigError(
            f"{variable} was refused by Slack ({method}: {code}): it is {how_to_get(variable)}."
        ) from None
    except OSError as error:  # DNS, refused connection, timeout (urllib's errors are OSErrors)
        if "slack_api_url" not in settings.model_fields_set:  # nobody set it: blaming it would mislead
            raise ConfigError(
                f"cannot reach slack.com ({error}): check this machine's network access to {api_url} "
                "(and HTTPS_PROXY, if it needs a proxy)."
            ) from None
        raise ConfigError(
            f"SLACK_API_URL: cannot reach Slack at {api_url} ({error}): it is {how_to_get('SLACK_API_URL')}."
        ) from None


def _without_password(url: str) -> str:
    split = urlsplit(url)
    if split.password is None:
        return url
    return split._replace(netloc=split.netloc.replace(f":{split.password}@", ":***@")).geturl()
