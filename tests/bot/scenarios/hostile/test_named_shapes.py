"""A signed request whose fields the listeners could not read is a 400 naming the field, and decides nothing."""

from typing import Any

import pytest

from bot.render import action_ids as ids
from loopback_slack.slack_requests import PostResult
from tests.bot.scenarios.hostile.shapes import click_with, decision_of, deny_with, reply_in_a_new_thread
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL


def _assert_refused_naming(named: str, result: PostResult, bot: Bot, approval_id: str) -> None:
    assert result.status == 400, result.body
    assert named in result.json()["error"]
    assert decision_of(bot, approval_id) is None


def _only_in_message(payload: dict[str, Any], *, thread_ts: str) -> None:
    """The click's thread named by its message only (the container names none)."""
    payload["container"].pop("thread_ts", None)
    payload["message"]["thread_ts"] = thread_ts


CLICKS = {
    "actions[0].value is missing": lambda p: p["actions"][0].pop("value"),
    "channel must be an object": lambda p: p.update(channel=CHANNEL),
    "container must be an object": lambda p: p.update(container="x"),
    "container.message_ts must be a string": lambda p: p["container"].update(message_ts=5),
    "container.thread_ts must be a Slack timestamp": lambda p: p["container"].update(thread_ts="1e999"),
    "message.thread_ts must be a string": lambda p: p["message"].update(thread_ts=["1.0"]),
    "message.thread_ts must be a Slack timestamp": lambda p: _only_in_message(p, thread_ts="soon"),
    "user.id is missing": lambda p: p.update(user=None),
}


@pytest.mark.parametrize("named", sorted(CLICKS))
def test_a_click_the_listener_could_not_read_is_a_400_naming_the_field(bot: Bot, named: str) -> None:
    approval_id, result = click_with(bot, CLICKS[named])
    _assert_refused_naming(named, result, bot, approval_id)


# Every button the bot renders, by its action id: each carries what it acts on (an approval, a standing approval).
BUTTONS = sorted(value for name, value in vars(ids).items() if name.endswith("_ACTION"))


@pytest.mark.parametrize("action_id", BUTTONS)
def test_a_click_on_any_button_of_the_bot_without_its_value_is_a_400(bot: Bot, action_id: str) -> None:
    approval_id, _ = bot.ask()
    payload = bot.click_payload(action_id, approval_id, user=APPROVER)
    payload["actions"][0].pop("value")
    result = bot.poster.post_action(payload)
    bot.drain()
    _assert_refused_naming("actions[0].value is missing", result, bot, approval_id)
    assert bot.ephemeral_texts(APPROVER) == []  # no listener ran: nobody is told anything


SUBMISSIONS = {
    "view.private_metadata must be a string": lambda p: p["view"].pop("private_metadata"),
    "view.state.values must be an object": lambda p: p["view"]["state"].update(values=[]),
    f'view.state.values."{ids.DENY_REASON_BLOCK}"."{ids.DENY_REASON_INPUT}".value must be a string': lambda p: p[
        "view"
    ]["state"]["values"][ids.DENY_REASON_BLOCK][ids.DENY_REASON_INPUT].update(value={"x": 1}),
}


@pytest.mark.parametrize("named", sorted(SUBMISSIONS))
def test_a_deny_modal_the_listener_could_not_read_is_a_400_naming_the_field(bot: Bot, named: str) -> None:
    approval_id, result = deny_with(bot, SUBMISSIONS[named])
    _assert_refused_naming(named, result, bot, approval_id)


EVENTS: dict[str, dict[str, Any]] = {
    "event.ts must be a Slack timestamp": {"ts": "1e999"},
    "event.text must be a string": {"text": None},
    "event.user must be a string": {"user": 5},
}


@pytest.mark.parametrize("named", sorted(EVENTS))
def test_a_thread_reply_the_listener_could_not_read_is_a_400_naming_the_field(bot: Bot, named: str) -> None:
    approval_id, _, result = reply_in_a_new_thread(bot, EVENTS[named])
    _assert_refused_naming(named, result, bot, approval_id)
