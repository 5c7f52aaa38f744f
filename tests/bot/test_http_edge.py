"""The HTTP edge: every malformed, hostile or half-sent request gets a clear 4xx and changes nothing."""

import json
import time
from urllib.parse import quote

import pytest

from bot import ids, keys
from tests.bot import slack_requests
from tests.bot.harness import APPROVER, CHANNEL, REQUESTER, Bot


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
    assert bot.services.redis.xlen(keys.JOBS) == 0


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

    remembered_s = bot.services.redis.ttl(keys.seen_signature(signature))
    accepted_s = ahead + 300 - int(time.time())  # how long a replay would still pass the signature check
    assert remembered_s >= accepted_s
    assert bot.poster.replay().status == 409
