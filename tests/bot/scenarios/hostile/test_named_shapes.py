"""A signed request whose fields the listeners could not read is a 400 naming the field, and decides nothing."""

import pytest

from bot.loopback_slack import slack_requests
from bot.render import action_ids as ids
from tests.bot.support.harness import APPROVER, CHANNEL, Bot, deny_submission

CLICKS = {
    "actions[0].value is missing": lambda p: p["actions"][0].pop("value"),
    "channel must be an object": lambda p: p.update(channel=CHANNEL),
    "container must be an object": lambda p: p.update(container="x"),
    "user.id is missing": lambda p: p.update(user=None),
}


@pytest.mark.parametrize("named", sorted(CLICKS))
def test_a_click_the_listener_could_not_read_is_a_400_naming_the_field(bot: Bot, named: str) -> None:
    approval_id, _ = bot.ask()
    payload = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    CLICKS[named](payload)
    result = bot.poster.post_action(payload)
    bot.drain()
    assert result.status == 400, result.body
    assert named in result.json()["error"]
    approval = bot.services.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None


SUBMISSIONS = {
    "view.private_metadata must be a string": lambda p: p["view"].pop("private_metadata"),
    "view.state.values must be an object": lambda p: p["view"]["state"].update(values=[]),
    f'view.state.values."{ids.DENY_REASON_BLOCK}"."{ids.DENY_REASON_INPUT}".value must be a string': lambda p: p[
        "view"
    ]["state"]["values"][ids.DENY_REASON_BLOCK][ids.DENY_REASON_INPUT].update(value={"x": 1}),
}


@pytest.mark.parametrize("named", sorted(SUBMISSIONS))
def test_a_deny_modal_the_listener_could_not_read_is_a_400_naming_the_field(bot: Bot, named: str) -> None:
    approval_id, _ = bot.ask()
    payload = deny_submission(approval_id)
    SUBMISSIONS[named](payload)
    result = bot.poster.post_view_submission(payload)
    bot.drain()
    assert result.status == 400, result.body
    assert named in result.json()["error"]
    approval = bot.services.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None


EVENTS = {
    "event.ts must be a Slack timestamp": {"ts": "1e999"},
    "event.text must be a string": {"text": None},
    "event.user must be a string": {"user": 5},
}


@pytest.mark.parametrize("named", sorted(EVENTS))
def test_a_thread_reply_the_listener_could_not_read_is_a_400_naming_the_field(bot: Bot, named: str) -> None:
    approval_id, _ = bot.ask()
    thread_ts = str(bot.approval_messages()[-1]["thread_ts"])
    body = slack_requests.message_event(channel=CHANNEL, text="approve: ok", user=APPROVER, thread_ts=thread_ts)
    body["event"].update(EVENTS[named])
    result = bot.poster.post_event(body)
    bot.drain()
    assert result.status == 400, result.body
    assert named in result.json()["error"]
    approval = bot.services.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None
