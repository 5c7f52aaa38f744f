"""The WSGI apps ``bench/ack.py`` compares, as gunicorn factories (configured by environment).

All are served by the same gunicorn, the Bolt ones in the fastest mode either could use
(``process_before_response=True``): ``bare()`` only acks the approve action; ``bare_round_trip()`` also sends one
no-op script; ``ours()`` is the real bot (request guard, decision checks, the atomic decision write and its outbox
entry); ``ours_python()`` is the bot with its decide script's reply canned: our own code without the decision's
work in Redis.
"""

import os
from typing import Any

import redis
from pydantic import SecretStr
from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.observe import trace_export
from bot.observe.exposition import WsgiApp
from bot.render import action_ids as ids
from bot.services import Services
from bot.settings import Settings
from bot.slack.edge.http import guarded_wsgi_app, wsgi_app
from bot.store.direct_script import DirectScript


def _api_url() -> str:
    # Bolt calls auth.test once per process (on the first request); bench/ack.py answers it.
    return os.environ["BENCH_SLACK_API_URL"]


def _secret() -> str:
    return os.environ["BENCH_SIGNING_SECRET"]


def _bare_app() -> App:
    """Bolt as both bare apps serve it: the fastest mode, no token check."""
    return App(
        client=WebClient(token="xoxb-bench", base_url=_api_url()),
        signing_secret=_secret(),
        process_before_response=True,
        token_verification_enabled=False,
    )


def bare() -> WsgiApp:
    """A Bolt app whose approve handler only acks."""
    app = _bare_app()

    @app.action(ids.APPROVE_ACTION)
    def approve(ack: Ack) -> None:
        ack()

    return wsgi_app(app)


def bare_round_trip() -> WsgiApp:
    """``bare()`` plus the one Redis round trip a recorded click cannot do without: a script that does nothing,
    sent as ours sends its decide script (``DirectScript``). What a click costs above it is our own work."""
    app = _bare_app()
    script = DirectScript(redis.Redis.from_url(os.environ["REDIS_URL"]), "return 1")

    @app.action(ids.APPROVE_ACTION)
    def approve(ack: Ack) -> None:
        script(keys=["bench:round-trip"], args=[])
        ack()

    return wsgi_app(app)


def ours() -> WsgiApp:
    """The bot as it serves clicks."""
    settings = Settings(
        slack_bot_token=SecretStr("xoxb-bench"),
        slack_signing_secret=SecretStr(_secret()),
        slack_api_url=_api_url(),
        redis_url=os.environ["REDIS_URL"],
    )
    if settings.traces:  # bench.ack --traces: the same bot, sending its spans over OTLP
        trace_export.install("web")
    services = Services(settings, redis_client=redis.Redis.from_url(os.environ["REDIS_URL"]))
    return guarded_wsgi_app(settings, services, token_verification=False)


def ours_python() -> WsgiApp:
    """``ours()`` with every script's reply the first one's: each click runs all of our code, and Redis only once.

    What ours costs above bare is then our Python alone; what ``ours()`` costs above this is the decision's work in
    Redis (the script's run, its writes' AOF, its longer command). A process's first click is decided for real.
    """
    app = ours()
    send = DirectScript._send
    first: list[Any] = []

    def canned(script: DirectScript, *args: Any) -> Any:
        if not first:
            first.append(send(script, *args))
        return first[0]

    DirectScript._send = canned  # type: ignore[method-assign,assignment]  # this process serves this app alone
    return app
