"""Bad input gets a clear answer and changes nothing: forged, stale, replayed, malformed, unknown, corrupted."""

import json
import time

import pytest

from bot.render import action_ids as ids
from bot.store import keys
from loopback_slack import slack_requests
from tests.bot.support import shards
from tests.bot.support.harness import Bot, is_decided
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER
from tests.bot.support.tampering import PostOptions


def _mention_body() -> dict[str, object]:
    return slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")


@pytest.mark.parametrize(("option", "status"), [("forge", 401), ("stale", 401), ("unsigned", 401)])
def test_forged_stale_and_unsigned_requests_are_refused_and_queue_nothing(bot: Bot, option: str, status: int) -> None:
    options: PostOptions = (
        {"forge": True} if option == "forge" else {"stale": True} if option == "stale" else {"unsigned": True}
    )
    result = bot.poster.post_event(_mention_body(), **options)

    assert result.status == status
    assert "signature" in result.json()["error"]
    bot.drain()
    assert bot.slack.calls("chat.postMessage") == []
    assert shards.jobs_queued(bot.services.stores.redis) == 0


def test_a_replayed_request_is_refused_and_runs_nothing_twice(bot: Bot) -> None:
    assert bot.poster.post_event(_mention_body()).status == 200
    replay = bot.poster.replay()

    assert replay.status == 409
    assert "replayed" in replay.json()["error"]
    bot.drain()
    assert len(bot.approval_messages()) == 1


def test_an_event_redelivered_by_slack_starts_one_session(bot: Bot) -> None:
    body = _mention_body()
    assert bot.poster.post_event(body).status == 200
    # Slack redelivers seconds later: a new timestamp, so a new signature, and the same event id.
    redelivery = bot.poster.post_event(body, retry_num=1, retry_reason="http_timeout", timestamp=int(time.time()) - 5)
    assert redelivery.status == 200
    bot.drain()
    assert len(bot.approval_messages()) == 1


@pytest.mark.parametrize(
    ("body", "content_type", "problem"),
    [
        (b"{not json", "application/json", "malformed body: not JSON"),
        (b"[1, 2]", "application/json", "expected a JSON object"),
        (b"payload=%7Bbroken", "application/x-www-form-urlencoded", "malformed payload: not JSON"),
        (b"", "application/x-www-form-urlencoded", "empty or unparseable form body"),
    ],
)
def test_signed_but_malformed_bodies_get_400_naming_the_problem(
    bot: Bot, body: bytes, content_type: str, problem: str
) -> None:
    result = bot.poster.post_raw(body, content_type)
    assert result.status == 400
    assert problem in result.json()["error"]


def test_a_too_large_body_is_refused(bot: Bot) -> None:
    result = bot.poster.post_raw(b"x" * (2 << 20), "application/json")
    assert result.status == 413


def test_a_client_still_sending_a_too_large_body_reads_the_413(bot: Bot) -> None:
    # Several MiB outrun the socket buffers: answering without reading them would reset the connection.
    for _ in range(3):
        assert bot.poster.post_raw(b"x" * (6 << 20), "application/json").status == 413


def test_a_click_on_an_unknown_approval_says_so_and_changes_nothing(bot: Bot) -> None:
    payload = slack_requests.block_actions(
        action_id=ids.APPROVE_ACTION, user_id=APPROVER, channel_id=CHANNEL, message_ts="1.000001", value="f" * 24
    )
    assert bot.poster.post_action(payload).status == 200
    bot.drain()
    [notice] = bot.ephemeral_texts(APPROVER)
    assert "no longer" in notice.lower() or "unknown" in notice.lower() or "not found" in notice.lower()
    assert shards.jobs_queued(bot.services.stores.redis) == 0


def test_a_corrupted_approval_fails_the_click_visibly_and_keeps_the_message_clickable(bot: Bot) -> None:
    approval_id, session_id = bot.ask()
    bot.corrupt(approval_id, session_id)

    assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
    bot.drain()

    [said] = bot.slack.calls("response_url")
    assert "not recorded" in said.args["text"]
    assert not is_decided(bot.approval_messages()[0])
    assert bot.services.stores.redis.hget(keys.approval(session_id, approval_id), "request") == b"{garbage"


def test_url_verification_answers_the_challenge(bot: Bot) -> None:
    result = bot.poster.post_event(slack_requests.url_verification("abc123"))
    assert result.status == 200
    assert json.loads(result.body).get("challenge") == "abc123" or result.body == "abc123"
