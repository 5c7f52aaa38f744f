"""``python -m bot socket`` end to end: Bolt's builtin Socket Mode handler (checked) against a loopback Slack.

The handler is built the way ``bot/cli/main.py`` builds it (``CheckedSocketModeHandler(app, app_token)`` over the
app whose client points at the fake): it calls ``apps.connections.open`` with the ``xapp-`` token on the fake Web API,
connects to the fake Socket Mode server, and acks the envelopes the test pushes; the worker is driven in-process as
in ``harness``.
"""

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from pydantic import SecretStr

from bot.render import action_ids as ids
from bot.render import blocks
from bot.services import Services
from bot.settings import Settings
from bot.slack.app import build_app
from bot.slack.edge.socket_mode import CheckedSocketModeHandler
from bot.worker import Worker
from loopback_slack import slack_requests
from tests.bot.support.fake_slack import Call, FakeSlack
from tests.bot.support.fake_socket_mode import FakeSocketModeServer
from tests.bot.support.harness import demo_factory, is_decided, message_click
from tests.bot.support.people import APPROVER, CHANNEL, CHANNEL_MEMBERS, REQUESTER
from tests.bot.support.processes import run_bot, start_bot

REPLY = "checkout: 3 replicas restarted"


def has_approve_button(message: dict[str, Any]) -> bool:
    return any(
        element.get("action_id") == ids.APPROVE_ACTION
        for block in message.get("blocks") or []
        if block.get("type") == "actions"
        for element in block.get("elements") or []
    )


def is_approval_post(call: Call) -> bool:
    return call.ok and blocks.approval_id_shown(call.args, live=True) is not None


@dataclass
class SocketBot:
    """The bot connected over Socket Mode, the fake Slack it talks to, and its worker (driven by ``drain_until``)."""

    slack: FakeSlack
    services: Services
    handler: CheckedSocketModeHandler
    worker: Worker

    @property
    def server(self) -> FakeSocketModeServer:
        return self.slack.socket_mode

    def drain_until(self, done: Callable[[], bool], *, timeout: float = 5) -> None:
        """Run jobs and deliver the outbox until ``done()`` holds and both are idle.

        Lazy listeners (the slash command's) enqueue after the ack, on Bolt's threads, so idle alone is not enough.
        """
        deadline = time.monotonic() + timeout
        while True:
            busy = self.worker.run_jobs_once(block_ms=1) + self.worker.deliverer.deliver_due()
            if not busy and done():
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the worker did not settle within {timeout}s; Slack calls: {self.slack.calls()}")
            if not busy:
                time.sleep(0.005)

    def approval_messages(self) -> list[dict[str, Any]]:
        """The approval messages in the channel that still have their buttons."""
        return [m for m in self.slack.messages(CHANNEL) if blocks.approval_id_shown(m, live=True) is not None]

    def click_approve(self, message: dict[str, Any], *, user: str) -> str:
        """Push the ``block_actions`` payload of a click on the Approve button of ``message``; return its envelope."""
        approval_id = blocks.approval_id_shown(message, live=True)
        assert approval_id is not None
        payload = message_click(
            self.slack, ids.APPROVE_ACTION, approval_id, user=user, channel=CHANNEL, message=message
        )
        return self.server.push_interactive(payload)


def close_handler(handler: CheckedSocketModeHandler, server: FakeSocketModeServer) -> None:
    """``handler.close()``, without its idle waits.

    ``close()`` marks the client closed (so it will not reconnect), then waits for its receive loop, which holds the
    socket's receive lock inside ``recv()`` (3 s timeout), and for its message loop (1 s queue timeout). Ending the TCP
    stream from the server side and waking the queue return both at once.
    """
    closer = threading.Thread(target=handler.close, name="close-socket-mode", daemon=True)
    closer.start()
    deadline = time.monotonic() + 5
    while not handler.client.closed and time.monotonic() < deadline:
        time.sleep(0.002)
    server.drop_connections()
    handler.client.message_queue.put(None)
    closer.join(timeout=5)
    assert not closer.is_alive(), "SocketModeHandler.close() hung"


@contextmanager
def socket_bot(redis_client: redis.Redis) -> Iterator[SocketBot]:
    """The bot as ``python -m bot socket`` runs it, with the fake Slack as its Web API and Socket Mode endpoint."""
    with FakeSlack(channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        settings = Settings(
            slack_bot_token=SecretStr(slack.token),
            slack_app_token=SecretStr(slack.app_token),
            slack_api_url=slack.url,
        )
        services = Services(settings, redis_client=redis_client, agent_factory=demo_factory)
        services.stores.jobs.ensure_group()
        app = build_app(settings, services)
        assert settings.slack_app_token is not None
        # As bot/cli/main.py does: the handler reaches apps.connections.open through app.client
        # (base_url = slack_api_url).
        handler = CheckedSocketModeHandler(app, settings.slack_app_token.get_secret_value())
        handler.connect()  # type: ignore[no-untyped-call]
        try:
            assert handler.client.is_connected(), "the Socket Mode handshake failed"
            yield SocketBot(slack, services, handler, services.worker(claim_idle_ms=60_000))
        finally:
            close_handler(handler, slack.socket_mode)
            services.close()


@pytest.fixture
def bot(redis_client: redis.Redis) -> Iterator[SocketBot]:
    with socket_bot(redis_client) as running:
        yield running


def test_the_handler_opens_a_connection_with_the_app_token(bot: SocketBot) -> None:
    [opened] = bot.slack.calls("apps.connections.open")
    assert opened.ok
    assert opened.headers["authorization"] == f"Bearer {bot.slack.app_token}"
    assert opened.response["url"].startswith(f"ws://127.0.0.1:{bot.server.port}/link/?ticket=")
    bot.server.wait_for_connection()  # the server counts it once its side of the handshake ends, maybe after ours
    assert bot.server.connection_count == 1
    assert bot.server.refused == 0


def test_mention_approve_click_resume_reply(bot: SocketBot) -> None:
    body = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
    thread_ts = body["event"]["ts"]

    ack = bot.server.wait_for_ack(bot.server.push_event(body))
    assert ack.payload is None

    bot.drain_until(lambda: bool(bot.approval_messages()))
    [posted] = bot.slack.wait_for("chat.postMessage", is_approval_post)
    assert posted.args["channel"] == CHANNEL
    assert posted.args["thread_ts"] == thread_ts
    [message] = bot.approval_messages()
    assert has_approve_button(message)
    assert "restart_service" in message["text"]

    click = bot.click_approve(message, user=APPROVER)
    assert bot.server.wait_for_ack(click).payload is None

    bot.drain_until(lambda: REPLY in [m.get("text") for m in bot.slack.messages(CHANNEL, thread_ts=thread_ts)])
    assert bot.slack.messages(CHANNEL, thread_ts=thread_ts)[-1]["text"] == REPLY
    [update] = [c for c in bot.slack.calls("chat.update") if c.args.get("ts") == message["ts"]]
    assert update.ok
    decided = bot.slack.message(CHANNEL, message["ts"])
    assert is_decided(decided)
    assert f"<@{APPROVER}>" in json.dumps(decided["blocks"])
    assert bot.services.stores.sessions.interrupted_sessions() == []


def test_slash_command_posts_an_anchor_and_the_approval_in_its_thread(bot: SocketBot) -> None:
    fields = slack_requests.slash_command(
        command=ids.AGENT_COMMAND, user_id=REQUESTER, channel_id=CHANNEL, text="restart checkout"
    )

    ack = bot.server.wait_for_ack(bot.server.push_command(fields))
    assert ack.payload is None

    bot.drain_until(lambda: bool(bot.approval_messages()))
    anchor, *_ = bot.slack.wait_for("chat.postMessage")
    assert anchor.args["channel"] == CHANNEL
    assert anchor.args["text"] == f"<@{REQUESTER}> asked the agent: restart checkout"
    assert "thread_ts" not in anchor.args
    [message] = bot.approval_messages()
    assert message["thread_ts"] == anchor.response["ts"]
    assert has_approve_button(message)


def test_a_redelivered_event_is_acked_but_handled_once(bot: SocketBot) -> None:
    body = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")

    first = bot.server.push_event(body)
    bot.server.wait_for_ack(first)
    retry = bot.server.push_event(body, retry_attempt=1, retry_reason="timeout")
    bot.server.wait_for_ack(retry)

    bot.drain_until(lambda: bool(bot.approval_messages()))
    assert len(bot.approval_messages()) == 1


def test_the_handler_reconnects_when_slack_asks_it_to(bot: SocketBot) -> None:
    bot.server.send_disconnect()
    bot.server.wait_for_connection(count=2)
    # As Slack does, close the old connection once the new one is up (the client waits on it to finish switching).
    bot.server.drop_connections(keep_newest=True)

    assert len(bot.slack.calls("apps.connections.open")) == 2
    body = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
    bot.server.wait_for_ack(bot.server.push_event(body))
    bot.drain_until(lambda: bool(bot.approval_messages()))


def test_apps_connections_open_takes_only_the_app_token() -> None:
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    with FakeSlack() as slack:
        client = WebClient(token=slack.token, base_url=slack.url)
        with pytest.raises(SlackApiError) as bot_token:
            client.apps_connections_open(app_token=slack.token)
        with pytest.raises(SlackApiError) as unknown:
            client.apps_connections_open(app_token="xapp-1-unknown")
        with pytest.raises(SlackApiError) as app_token_elsewhere:
            WebClient(token=slack.app_token, base_url=slack.url).auth_test()
        assert client.apps_connections_open(app_token=slack.app_token)["url"].startswith("ws://127.0.0.1:")
    assert bot_token.value.response["error"] == "not_allowed_token_type"
    assert unknown.value.response["error"] == "invalid_auth"
    assert app_token_elsewhere.value.response["error"] == "not_allowed_token_type"


def _environment(**overrides: str) -> dict[str, str]:
    dropped = {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL", "REDIS_URL"}
    dropped |= {"AGENT_FACTORY", "APPROVAL_POLICY", "PORT"}
    environment = {key: value for key, value in os.environ.items() if key.upper() not in dropped}
    environment.update(overrides)
    return environment


@pytest.mark.parametrize(
    ("app_token", "expected"),
    [(None, "SLACK_APP_TOKEN is not set"), ("xoxb-not-an-app-token", "SLACK_APP_TOKEN must start with xapp-")],
)
def test_socket_mode_needs_an_app_token(app_token: str | None, expected: str) -> None:
    overrides = {"SLACK_BOT_TOKEN": "xoxb-test-token"}
    if app_token is not None:
        overrides["SLACK_APP_TOKEN"] = app_token
    completed = run_bot(["socket"], **overrides)

    assert completed.returncode == 2, completed.stderr
    assert expected in completed.stderr
    assert "Traceback" not in completed.stderr


def test_python_m_bot_socket_runs_a_request_to_its_reply() -> None:
    """The real entry point: embedded Redis, in-process worker, Socket Mode against the fake; SIGTERM stops it."""
    with FakeSlack(channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        environment = _environment(
            SLACK_BOT_TOKEN=slack.token, SLACK_APP_TOKEN=slack.app_token, SLACK_API_URL=slack.url, LOG_LEVEL="WARNING"
        )
        process = start_bot(
            ["socket"],
            environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: a failure kills its embedded Redis too
        )
        try:
            server = slack.socket_mode
            server.wait_for_connection(timeout=30)
            body = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
            thread_ts = body["event"]["ts"]
            server.wait_for_ack(server.push_event(body))

            [posted] = slack.wait_for("chat.postMessage", is_approval_post, timeout=10)
            message = slack.message(CHANNEL, posted.response["ts"])
            approval_id = blocks.approval_id_shown(message, live=True)
            assert approval_id is not None
            click = message_click(
                slack, ids.APPROVE_ACTION, approval_id, user=APPROVER, channel=CHANNEL, message=message
            )
            server.wait_for_ack(server.push_interactive(click))
            slack.wait_for("chat.postMessage", lambda call: call.args.get("text") == REPLY, timeout=10)
            assert slack.messages(CHANNEL, thread_ts=thread_ts)[-1]["text"] == REPLY

            process.send_signal(signal.SIGTERM)
            # On SIGTERM the bot calls handler.close(), which waits for slack_sdk's receive loop to leave a blocking
            # recv() (3 s timeout); ending the stream from the server side lets it leave at once.
            server.drop_connections()
            _, stderr = process.communicate(timeout=20)
        finally:
            if process.poll() is None:
                # The whole group: an embedded redis-server left alive would hold the pipes open for ever.
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate(timeout=20)
    assert process.returncode == 0, stderr
