"""``python -m bot sandbox``: the whole product on one machine, with a local Slack stand-in instead of a workspace.

One process tree: an embedded Redis (a child process, unless ``REDIS_URL`` is set), and in this process the bot in
HTTP mode on a loopback port, the worker's loops, and the stand-in (Web API and page) on ``--port``. The bot is
built exactly as ``python -m bot serve`` builds it; only its settings differ: a generated token and signing secret,
``SLACK_API_URL`` pointing at the stand-in, the built-in policy unless ``APPROVAL_POLICY`` is set, and a clock that
reads the sandbox's virtual-time offset. SIGINT and SIGTERM stop everything, the Redis child included.
"""

import logging
import os
import secrets
import signal
import socketserver
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.message import Message
from typing import Any, Final
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from pydantic import SecretStr

from bot import preflight
from bot.render.texts import sandbox_cli
from bot.sandbox.people import POLICY_FILE
from bot.sandbox.workspace import SandboxSlack
from bot.services import DEFAULT_RETRY_S, Services, connect_configured_redis, connect_redis
from bot.settings import Settings, read_settings
from bot.slack.edge.http import guarded_wsgi_app
from bot.store.access.api_keys import new_key
from bot.store.offset_clock import OffsetClock
from loopback_slack import Reply, Respond
from loopback_slack.slack_requests import SignedPoster
from state import RedisServer

logger = logging.getLogger(__name__)

SANDBOX_CLIENT = "sandbox"
"""The HTTP API client the sandbox creates a key for (and announces)."""
_API_TIMEOUT_S = 90  # a long-poll waits up to 60 s


class _BotServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)  # no getfqdn() DNS lookup
        self.server_name, self.server_port = "127.0.0.1", int(self.server_address[1])
        self.setup_environ()


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        logger.debug(format, *args)


def sandbox_settings(*, token: str, signing_secret: str, api_url: str) -> Settings:
    """The environment's settings with the sandbox's Slack credentials and, unless set, its policy.

    Raises:
        ConfigError: A variable that is set is malformed.
    """
    settings = read_settings()
    return settings.model_copy(
        update={
            "slack_bot_token": SecretStr(token),
            "slack_signing_secret": SecretStr(signing_secret),
            "slack_app_token": None,
            "slack_api_url": api_url,
            "approval_policy": settings.approval_policy or POLICY_FILE,
        }
    )


@contextmanager
def _redis_url() -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        preflight.reachable_redis(url).close()  # one message naming REDIS_URL, before anything starts
        yield url
        return
    with RedisServer() as server:
        logger.info("embedded Redis at %s", server.url)
        yield server.url


@contextmanager
def running_sandbox(*, port: int = 0, host: str = "127.0.0.1", api_key: str | None = None) -> Iterator[SandboxSlack]:
    """Start Redis, the stand-in, the bot and the worker; yield the stand-in; stop them all on exit.

    The bot's HTTP API is served at the stand-in's ``/v1/`` too; ``api_key`` is the key of its ``sandbox`` client.
    """
    token = "xoxb-sandbox-" + secrets.token_hex(12)
    signing_secret = secrets.token_hex(16)
    with _redis_url() as url:
        client = connect_redis(url, retry_s=DEFAULT_RETRY_S, cluster="no")
        slack = SandboxSlack(token=token, redis_client=client, port=port, host=host)
        slack.start()
        worker_thread: threading.Thread | None = None
        bot_server: _BotServer | None = None
        try:
            settings = sandbox_settings(token=token, signing_secret=signing_secret, api_url=slack.url)
            bot_client = connect_configured_redis(settings, url=url)
            services = Services(settings, redis_client=bot_client, clock=OffsetClock(bot_client))
            worker = services.worker()
            worker_thread = threading.Thread(target=worker.run_forever, name="worker", daemon=True)
            worker_thread.start()
            application = guarded_wsgi_app(settings, services)
            bot_server = make_server("127.0.0.1", 0, application, server_class=_BotServer, handler_class=_QuietHandler)
            threading.Thread(target=bot_server.serve_forever, name="bot-http", daemon=True).start()
            if api_key is not None:
                services.stores.api_keys.revoke(SANDBOX_CLIENT)  # a Redis kept from an earlier run holds the old one
                services.stores.api_keys.create(SANDBOX_CLIENT, key=api_key)
            to_the_bot = _forward_to(f"http://127.0.0.1:{bot_server.server_port}")
            slack.add_route("/v1/", to_the_bot)
            for probe in ("/metrics", "/healthz", "/readyz"):  # what an operator would scrape, at the page's address
                slack.add_route(probe, to_the_bot, exact=True)
            slack.connect(SignedPoster(f"http://127.0.0.1:{bot_server.server_port}", signing_secret))
            yield slack
        finally:
            slack.close()
            if bot_server is not None:
                bot_server.shutdown()
                bot_server.server_close()
            if worker_thread is not None:
                worker.stop()
                worker_thread.join(timeout=10)
            client.close()


def _forward_to(bot_url: str) -> Respond:
    """The stand-in's ``/v1/``: requests forwarded to the bot's HTTP API, so it sits at the page's address."""

    def forward(method: str, raw_path: str, headers: dict[str, str], body: bytes) -> Reply:
        sent = {name: value for name, value in headers.items() if name in _FORWARDED_ASKING}
        request = urllib.request.Request(bot_url + raw_path, data=body or None, headers=sent, method=method)
        try:
            with urllib.request.urlopen(request, timeout=_API_TIMEOUT_S) as response:
                return _reply_of(response.status, response.read(), response.headers)
        except urllib.error.HTTPError as error:
            return _reply_of(error.code, error.read(), error.headers)

    return forward


_FORWARDED_ASKING: Final = ("authorization", "content-type", "content-length")
_FORWARDED_ANSWERING: Final = ("Allow", "Location", "Retry-After", "WWW-Authenticate")


def _reply_of(status: int, body: bytes, headers: Message) -> Reply:
    kept = {name: value for name in _FORWARDED_ANSWERING if (value := headers.get(name)) is not None}
    return Reply(status, body, headers.get("Content-Type", "application/json"), headers=kept)


class _QuietWhenStopping(logging.Filter):
    """Drops the worker's errors once stopping: on Ctrl-C the terminal signals Redis too, so it may go first."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self._stop = stop

    def filter(self, record: logging.LogRecord) -> bool:
        noisy = record.name.startswith(("bot.worker", "bot.slack.outbound.delivery", "slack_sdk", "slack_bolt"))
        return not (noisy and self._stop.is_set())


def run(*, port: int, host: str = "127.0.0.1", announce: Callable[[str], None] = print) -> int:
    """Run the sandbox until SIGINT or SIGTERM; return the exit status."""
    stop = threading.Event()
    quiet = _QuietWhenStopping(stop)
    for log_handler in logging.getLogger().handlers:
        log_handler.addFilter(quiet)

    def shutdown(signum: int, _frame: object) -> None:
        logger.info("signal %d: stopping the sandbox", signum)
        stop.set()

    previous = {sig: signal.signal(sig, shutdown) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        api_key = new_key()
        with running_sandbox(port=port, host=host, api_key=api_key) as slack:
            shown = "127.0.0.1" if host in {"0.0.0.0", ""} else host
            announce(f"Signoff sandbox: open http://{shown}:{slack.port}/ (Ctrl-C to stop)")
            announce(sandbox_cli.sandbox_api_hint(f"http://{shown}:{slack.port}/v1/", api_key))
            stop.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
