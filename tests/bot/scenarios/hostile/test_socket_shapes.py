"""Red team: over Socket Mode, an envelope with odd field types is acked and never stops the handler."""

from typing import Any

import pytest
import redis

from loopback_slack import slack_requests
from tests.bot.scenarios.test_socket_mode import socket_bot
from tests.bot.support.people import CHANNEL, REQUESTER

ODD: dict[str, Any] = {
    "channel_int": {"channel": 5},
    "user_int": {"user": 5},
    "ts_text": {"ts": "abc"},
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_an_odd_event_is_acked_and_the_next_request_still_works(redis_client: redis.Redis, name: str) -> None:
    with socket_bot(redis_client) as bot:
        odd = slack_requests.message_event(channel=CHANNEL, text="approve: ok", user=REQUESTER, thread_ts="1.0")
        odd["event"].update(ODD[name])
        odd_envelope = bot.server.push_event(odd)
        good = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
        bot.server.wait_for_ack(bot.server.push_event(good))
        bot.drain_until(lambda: bool(bot.approval_messages()))
        bot.server.wait_for_ack(odd_envelope)  # else Slack redelivers it, and it fails the same way each time
