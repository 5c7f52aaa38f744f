"""The stand-in's Web API answers, parsed by the bot's own client (``slack_sdk``), and the requests it signs."""

import time
from collections.abc import Iterator

import pytest
import redis
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.views import View
from slack_sdk.signature import SignatureVerifier

from bot.render import blocks
from bot.sandbox.people import CHANNEL, PEOPLE
from bot.sandbox.workspace import SandboxSlack
from bot.store import keys
from loopback_slack import slack_requests
from tests.bot.support.approval_requests import an_approval_request
from tests.sandbox.client import APPROVER, REQUESTER


@pytest.fixture
def stand_in(redis_client: redis.Redis) -> Iterator[SandboxSlack]:
    with SandboxSlack(token="xoxb-sandbox-test", redis_client=redis_client) as slack:
        yield slack


@pytest.fixture
def client(stand_in: SandboxSlack) -> WebClient:
    return WebClient(token="xoxb-sandbox-test", base_url=stand_in.url)


def test_every_method_the_bot_calls_answers_in_the_shape_slack_sdk_expects(
    stand_in: SandboxSlack, client: WebClient
) -> None:
    auth = client.auth_test()
    assert auth["ok"] is True
    assert auth["user_id"] == stand_in.identity.bot_user_id
    assert auth["team_id"] == "T0SANDBOX"

    human = stand_in.add_message(CHANNEL, user=REQUESTER, text=f"<@{stand_in.identity.bot_user_id}> restart checkout")
    posted = client.chat_postMessage(channel=CHANNEL, thread_ts=human["ts"], text="hello", blocks=[])
    assert posted["channel"] == CHANNEL
    assert posted["message"]["thread_ts"] == human["ts"]
    assert float(posted["ts"]) > float(human["ts"])  # real-time, increasing timestamps

    updated = client.chat_update(channel=CHANNEL, ts=posted["ts"], text="changed")
    assert updated["text"] == "changed"
    assert updated["message"]["edited"]

    ephemeral = client.chat_postEphemeral(channel=CHANNEL, user=APPROVER, text="only you")
    assert ephemeral["message_ts"]

    replies = client.conversations_replies(channel=CHANNEL, ts=human["ts"])
    assert [m["text"] for m in replies["messages"]] == [human["text"], "changed"]
    assert replies["messages"][0]["reply_count"] == 1

    dm = client.conversations_open(users=APPROVER)
    assert dm["channel"]["id"] == stand_in.dm_channel(APPROVER)
    client.chat_postMessage(channel=APPROVER, text="escalated to you")
    assert [m["text"] for m in stand_in.messages(stand_in.dm_channel(APPROVER))] == ["escalated to you"]

    for person in PEOPLE:
        user = client.users_info(user=person.user_id)["user"]
        assert user["real_name"] == person.real_name
        assert user["profile"]["display_name"] == person.name

    home = client.views_publish(user_id=APPROVER, view={"type": "home", "blocks": []})
    assert View(**home["view"]).type == "home"
    assert client.chat_getPermalink(channel=CHANNEL, message_ts=posted["ts"])["permalink"].startswith("https://")


def test_views_open_needs_a_trigger_the_stand_in_issued(stand_in: SandboxSlack, client: WebClient) -> None:
    request = an_approval_request(
        team_id="T0SANDBOX", channel_id=CHANNEL, requested_by=REQUESTER, tool_input={"service": "checkout"}
    )
    with pytest.raises(SlackApiError) as refused:
        client.views_open(trigger_id="made-up", view=blocks.deny_modal(request, reason_required=True))
    assert refused.value.response["error"] == "invalid_trigger_id"

    trigger = stand_in._trigger(APPROVER)
    opened = client.views_open(trigger_id=trigger, view=blocks.deny_modal(request, reason_required=True))
    view = View(**opened["view"])
    assert view.callback_id == "signoff_deny_modal"
    assert view.private_metadata == request.approval_id
    assert stand_in.state(APPROVER)["modal"]["id"] == opened["view"]["id"]
    assert stand_in.state(REQUESTER)["modal"] is None  # a modal is shown to the person who clicked


def test_requests_to_the_bot_are_signed_as_slack_signs_them() -> None:
    verifier = SignatureVerifier("s3cret")
    body, now = b'{"type":"event_callback"}', int(time.time())
    assert verifier.is_valid(body=body, timestamp=str(now), signature=slack_requests.sign("s3cret", now, body))
    assert not verifier.is_valid(body=body, timestamp=str(now), signature=slack_requests.sign("other", now, body))


def test_a_mention_is_a_message_event_and_an_app_mention_as_slack_sends_both() -> None:
    space = slack_requests.Team("T1", "t", "A1", "U0BOT", "B1")
    sent = slack_requests.message_events(
        space, user=REQUESTER, channel=CHANNEL, text="<@U0BOT> hi", ts="1.5", thread_ts=None
    )
    assert [body["event"]["type"] for body in sent] == ["message", "app_mention"]
    assert len({body["event_id"] for body in sent}) == 2
    reply = slack_requests.message_events(
        space, user=REQUESTER, channel=CHANNEL, text="why?", ts="2.5", thread_ts="1.5"
    )
    assert [body["event"]["type"] for body in reply] == ["message"]
    assert reply[0]["event"]["thread_ts"] == "1.5"


def test_the_clock_control_adds_to_the_offset_in_redis(stand_in: SandboxSlack, redis_client: redis.Redis) -> None:
    before = stand_in.version
    assert stand_in.advance_clock(3_600_000)["clock"]["offset_ms"] == 3_600_000
    assert stand_in.advance_clock(300_000)["clock"]["offset_ms"] == 3_900_000
    assert int(redis_client.get(keys.CLOCK_OFFSET) or 0) == 3_900_000
    assert stand_in.version > before  # the page hears about it
    assert stand_in.state(REQUESTER)["clock"]["offset_ms"] == 3_900_000
