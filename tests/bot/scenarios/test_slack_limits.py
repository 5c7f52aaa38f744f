"""Slack's published message limits: the fake enforces them as Slack does, and the bot stays within them."""

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.domain.clock import ManualClock
from bot.render.texts import app_home
from loopback_slack import message_limit_error
from tests.bot.support.agents import answering_agent
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import running_bot
from tests.bot.support.people import CHANNEL


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        yield server


def _section(length: int) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": "x" * length}}


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"text": "x" * 40_001}, "msg_too_long"),
        ({"text": "t", "blocks": [_section(3_001)]}, "invalid_blocks"),
        ({"text": "t", "blocks": [_section(10)] * 51}, "invalid_blocks"),
        (
            {"text": "t", "blocks": [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}]},
            "invalid_blocks",
        ),
        ({"text": "t", "blocks": [_section(2_900)] * 5}, "msg_blocks_too_long"),
    ],
)
def test_the_fake_refuses_messages_over_slacks_limits(fake: FakeSlack, arguments: dict[str, Any], error: str) -> None:
    client = WebClient(token=fake.token, base_url=fake.url)
    for method in (client.chat_postMessage, client.chat_postEphemeral):
        with pytest.raises(SlackApiError) as refused:
            method(channel=CHANNEL, user="U1", **arguments)
        assert refused.value.response["error"] == error
    assert fake.messages(CHANNEL) == []


def test_the_fake_takes_a_message_at_the_limits(fake: FakeSlack) -> None:
    client = WebClient(token=fake.token, base_url=fake.url)
    client.chat_postMessage(channel=CHANNEL, text="x" * 40_000, blocks=[_section(3_000)] * 4)
    client.chat_postMessage(channel=CHANNEL, text="t", blocks=[_section(10)] * 50)
    assert len(fake.messages(CHANNEL)) == 2


def _flat(text: str) -> str:
    return "".join(text.split())


def test_a_long_answer_arrives_whole_in_several_messages_in_order(redis_client: redis.Redis) -> None:
    answer = "".join(f"Paragraph {number}: " + "word " * 100 + "\n\n" for number in range(100))  # ~52,000 characters
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=answering_agent(answer), clock=clock) as bot:
        bot.slack.fail_next("chat.postMessage", status=503, times=1)  # the first part must wait; none overtakes it
        bot.mention("tell me everything")
        bot.drain()
        clock.advance(600)
        bot.drain()

        posted = bot.slack.calls("chat.postMessage")
        assert all(call.ok for call in posted[1:]), [call.error for call in posted]
        thread = [m for m in bot.slack.messages(CHANNEL) if m.get("blocks")]
        assert len(thread) > 1
        shown = "".join(block["text"]["text"] for message in thread for block in message["blocks"])
        assert _flat(shown) == _flat(answer)
        assert bot.services.stores.outbox.dead_letters() == {}


def test_a_long_approvals_list_stays_within_slacks_text_limit() -> None:
    lines = [
        f"• `{'t' * 200}` asked by <@U{number:08d}>, waiting 5 min — <https://x.slack.com/p{number}|open>"
        for number in range(200)
    ]
    text = app_home.pending_list(lines)
    assert message_limit_error({"text": text}) is None
    assert text.startswith(app_home.pending_header(200))
    assert text.endswith(app_home.home_more(200 - (text.count("\n") - 1)))
    assert app_home.pending_list(lines[:3]).count("\n") == 3
