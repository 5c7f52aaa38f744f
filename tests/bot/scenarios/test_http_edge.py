"""The HTTP edge: every malformed, hostile or half-sent request gets a clear 4xx and changes nothing."""

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from bench.serving import free_port
from bot.render import action_ids as ids
from bot.services import connect_redis
from bot.slack.edge.http import serve
from bot.store import keys
from loopback_slack import slack_requests
from state import RedisServer
from tests.bot.support import shards
from tests.bot.support.harness import SIGNING_SECRET, Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER
from tests.outage import redis_stopped


def _mention() -> bytes:
    return slack_requests.encode_event(
        slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
    )


@pytest.mark.parametrize(
    ("headers", "named"),
    [
        ({"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=" + "0" * 64}, "X-Slack-Request-Timestamp"),
        ({"X-Slack-Request-Timestamp": "1e9", "X-Slack-Signature": "v0=" + "0" * 64}, "X-Slack-Request-Timestamp"),
        ({"X-Slack-Request-Timestamp": "NOW", "X-Slack-Signature": "v0=" + "é" * 64}, "X-Slack-Request-Timestamp"),
        ({"X-Slack-Signature": "v0=" + "é" * 64}, "X-Slack-Signature"),
        ({"X-Slack-Signature": "v0=\u00ff\u00fe"}, "X-Slack-Signature"),
    ],
)
def test_malformed_signature_headers_get_401_naming_the_header(bot: Bot, headers: dict[str, str], named: str) -> None:
    fresh = {"X-Slack-Request-Timestamp": str(int(time.time()))}
    result = bot.poster.post_raw(_mention(), "application/json", unsigned=True, headers={**fresh, **headers})
    assert result.status == 401, result.body
    assert named in result.json()["error"]
    bot.drain()
    assert shards.jobs_queued(bot.services.stores.redis) == 0


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("[" * 100_000 + "]" * 100_000, "application/json"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "application/json"),
        ("payload=" + quote("[" * 100_000 + "]" * 100_000), "application/x-www-form-urlencoded"),
        (
            "payload=" + quote('{"type":"block_actions","x":' + "[" * 100_000 + "]" * 100_000 + "}"),
            "application/x-www-form-urlencoded",
        ),
    ],
)
def test_signed_bodies_nested_100000_deep_get_400(bot: Bot, body: str, content_type: str) -> None:
    result = bot.poster.post_raw(body, content_type)
    assert result.status == 400, result.body
    assert "nested too deeply" in result.json()["error"]


def test_a_signed_view_submission_without_a_view_type_gets_400(bot: Bot) -> None:
    approval_id, _session = bot.ask()
    payload = slack_requests.view_submission(
        callback_id=ids.DENY_MODAL_CALLBACK,
        user_id=APPROVER,
        private_metadata=approval_id,
        values={ids.DENY_REASON_BLOCK: {ids.DENY_REASON_INPUT: {"type": "plain_text_input", "value": "no"}}},
    )
    del payload["view"]["type"]
    result = bot.poster.post_view_submission(payload)
    assert result.status == 400, result.body
    assert "view.type" in result.json()["error"]
    bot.drain()
    assert json.dumps(bot.approval_messages()[0]["blocks"]).count(ids.APPROVE_ACTION) == 1


def test_a_request_timestamped_ahead_is_remembered_for_as_long_as_it_is_accepted(bot: Bot) -> None:
    ahead = int(time.time()) + 290  # within Slack's five minutes, in the future
    assert bot.poster.post_raw(_mention(), "application/json", timestamp=ahead).status == 200
    assert bot.poster.last is not None
    signature = bot.poster.last.headers["X-Slack-Signature"]

    remembered_s = bot.services.stores.redis.ttl(keys.seen_signature(signature))
    accepted_s = ahead + 300 - int(time.time())  # how long a replay would still pass the signature check
    assert remembered_s >= accepted_s
    assert bot.poster.replay().status == 409


def _raw_exchange(url: str, head: str, body: bytes = b"", *, wait_s: float = 3) -> str:
    """Send ``head`` (request line and headers) and ``body`` over one socket left open; the answer's status line."""
    split = urlsplit(url)
    with socket.create_connection((split.hostname or "127.0.0.1", split.port or 80), timeout=wait_s) as connection:
        connection.sendall(head.encode("latin-1") + b"\r\n" + body)
        return connection.makefile("rb").readline().decode("latin-1").strip()


@pytest.mark.parametrize(
    ("length_header", "status"),
    [
        ("", "411"),
        ("Content-Length: -1\r\n", "400"),
        ("Content-Length: 12abc\r\n", "400"),
        ("Content-Length: 2097152\r\n", "413"),
    ],
)
def test_a_missing_negative_or_huge_content_length_is_refused_before_the_body_is_read(
    bot: Bot, length_header: str, status: str
) -> None:
    body = _mention()
    now = str(int(time.time()))
    head = (
        "POST /slack/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"X-Slack-Request-Timestamp: {now}\r\nX-Slack-Signature: {slack_requests.sign(SIGNING_SECRET, now, body)}\r\n"
        f"{length_header}"
    )
    # The connection stays open after the body: a server reading "to the end" would never answer.
    assert _raw_exchange(bot.url, head, body).split(" ")[1] == status
    bot.drain()
    assert shards.jobs_queued(bot.services.stores.redis) == 0


def _ok(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


def test_serve_drops_connections_that_never_finish_their_request() -> None:
    stop = threading.Event()
    port = free_port()
    server = threading.Thread(
        target=serve, args=(_ok,), kwargs={"port": port, "stop": stop, "host": "127.0.0.1", "request_timeout_s": 0.3}
    )
    server.start()
    try:
        half_sent: list[socket.socket] = []
        deadline = time.monotonic() + 5
        while not half_sent:
            try:
                half_sent = [socket.create_connection(("127.0.0.1", port), timeout=3) for _ in range(20)]
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.02)
        for connection in half_sent:
            connection.sendall(b"POST /slack/events HTTP/1.1\r\nHost: local")
        for connection in half_sent:
            assert connection.recv(1) == b"", "a half-sent request still holds its connection"
            connection.close()
        assert (
            _raw_exchange(f"http://127.0.0.1:{port}/", "GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
            == "HTTP/1.0 200 OK"
        )
    finally:
        stop.set()
        server.join(timeout=5)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("[" * 100_000 + "]" * 100_000, "application/json"),
        ("payload=" + quote("[" * 100_000 + "]" * 100_000), "application/x-www-form-urlencoded"),
    ],
)
def test_signed_bodies_nested_100000_deep_while_redis_is_down_get_an_answer_not_a_500(
    own_redis: RedisServer, body: str, content_type: str
) -> None:
    with running_bot(connect_redis(own_redis.url, retry_s=0.2), agent_factory=demo_factory) as bot:
        with redis_stopped(own_redis):
            result = bot.poster.post_raw(body, content_type)
        assert result.status == 503, result.body
        assert "error" in result.json()


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        ({"type": "block_actions", "user": {"id": APPROVER}, "actions": []}, "actions"),
        ({"type": "block_actions", "user": {"id": APPROVER}, "actions": ["approve"]}, "actions"),
        ({"type": "view_submission", "user": {"id": APPROVER}, "view": "deny"}, "view.type"),
        ({"type": 7}, "type"),
    ],
)
def test_signed_interactions_bolt_cannot_read_get_400_naming_the_field(
    bot: Bot, payload: dict[str, object], named: str
) -> None:
    result = bot.poster.post_action(payload)
    assert result.status == 400, result.body
    assert named in result.json()["error"]


def test_a_signed_event_without_an_event_type_gets_400(bot: Bot) -> None:
    result = bot.poster.post_event({"type": "event_callback", "team_id": "T0TEST", "event": {"user": REQUESTER}})
    assert result.status == 400, result.body
    assert "event.type" in result.json()["error"]
