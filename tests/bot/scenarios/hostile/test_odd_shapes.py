"""Red team: signed requests with odd shapes are 4xx (or a handled 200), never 500, and the bot keeps working."""

from typing import Any

import pytest

from bot.render import action_ids as ids
from loopback_slack import slack_requests
from tests.bot.scenarios.hostile.shapes import click_with, decision_of, deny_with, reply_in_a_new_thread
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER


def _set(path: str, value: Any) -> Any:
    def mutate(payload: dict[str, Any]) -> None:
        node: Any = payload
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last = parts[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


ACTION_MUTATIONS = {
    "value_int": _set("actions.0.value", 12345),
    "value_dict": _set("actions.0.value", {"a": 1}),
    "value_missing": lambda p: p["actions"][0].pop("value"),
    "value_huge": _set("actions.0.value", "A" * 200_000),
    "value_nul": _set("actions.0.value", "abc\x00def"),
    "user_null": _set("user", None),
    "user_id_int": _set("user.id", 7),
    "user_missing": lambda p: p.pop("user"),
    "channel_str": _set("channel", "C0OPS"),
    "channel_int": _set("channel", 5),
    "user_int": _set("user", 5),
    "team_int": _set("team", 5),
    "enterprise_int": _set("enterprise", 5),
    "container_str": _set("container", "x"),
    "message_list": _set("message", []),
    "message_thread_ts_int": _set("message.thread_ts", 5),
    "action_id_int": _set("actions.0.action_id", 5),
    "team_null": _set("team", None),
    "trigger_missing": lambda p: p.pop("trigger_id"),
}


@pytest.mark.parametrize("name", sorted(ACTION_MUTATIONS))
def test_odd_block_actions_are_never_a_500_and_the_bot_keeps_deciding(bot: Bot, name: str) -> None:
    approval_id, result = click_with(bot, ACTION_MUTATIONS[name])
    assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
    bot.drain()
    assert decision_of(bot, approval_id) is not None
    assert result.status < 500, (result.status, result.body[:300])


VIEW_MUTATIONS = {
    "metadata_int": _set("view.private_metadata", 5),
    "metadata_missing": lambda p: p["view"].pop("private_metadata"),
    "state_str": _set("view.state", "x"),
    "values_list": _set("view.state.values", []),
    "reason_dict": _set(f"view.state.values.{ids.DENY_REASON_BLOCK}.{ids.DENY_REASON_INPUT}.value", {"x": 1}),
    "reason_block_str": _set(f"view.state.values.{ids.DENY_REASON_BLOCK}", "x"),
    "user_null": _set("user", None),
    "callback_int": _set("view.callback_id", 5),
}


@pytest.mark.parametrize("name", sorted(VIEW_MUTATIONS))
def test_odd_view_submissions_are_never_a_500(bot: Bot, name: str) -> None:
    _, result = deny_with(bot, VIEW_MUTATIONS[name])
    assert result.status < 500, (result.status, result.body[:300])


EVENT_MUTATIONS: dict[str, dict[str, Any]] = {
    "ts_text": {"ts": "abc"},
    "ts_huge": {"ts": "1e999"},
    "ts_int": {"ts": 17},
    "thread_ts_int": {"thread_ts": 12},
    "user_int": {"user": 5},
    "channel_int": {"channel": 5},
    "text_int": {"text": 5},
    "text_null": {"text": None},
}


@pytest.mark.parametrize("name", sorted(EVENT_MUTATIONS))
def test_odd_thread_replies_are_never_a_500_and_never_blind_the_thread(bot: Bot, name: str) -> None:
    approval_id, thread_ts, result = reply_in_a_new_thread(bot, EVENT_MUTATIONS[name])
    assert bot.reply("approve: fine", user=APPROVER, thread_ts=thread_ts).status == 200
    bot.drain()
    assert decision_of(bot, approval_id) is not None
    assert result.status < 500, (result.status, result.body[:300])


COMMAND_MUTATIONS = {
    "channel_missing": lambda f: f.pop("channel_id"),
    "user_missing": lambda f: f.pop("user_id"),
    "text_huge": lambda f: f.update(text="x" * 900_000),
    "response_url_missing": lambda f: f.pop("response_url"),
}


@pytest.mark.parametrize("command", [ids.AGENT_COMMAND, ids.APPROVALS_COMMAND])
@pytest.mark.parametrize("name", sorted(COMMAND_MUTATIONS))
def test_odd_commands_are_never_a_500(bot: Bot, name: str, command: str) -> None:
    fields = slack_requests.slash_command(command=command, user_id=REQUESTER, channel_id=CHANNEL, text="status")
    COMMAND_MUTATIONS[name](fields)
    result = bot.poster.post_command(fields)
    bot.drain()
    assert result.status < 500, (result.status, result.body[:300])


HOME_EVENTS: dict[str, dict[str, Any]] = {
    "user_list": {"type": "app_home_opened", "user": [1], "tab": "home"},
    "user_missing": {"type": "app_home_opened", "tab": "home"},
    "tab_int": {"type": "app_home_opened", "user": "U0X", "tab": 5},
}


@pytest.mark.parametrize("name", sorted(HOME_EVENTS))
def test_odd_home_events_are_never_a_500_and_never_blind_home(bot: Bot, name: str) -> None:
    result = bot.poster.post_event(slack_requests.event_callback(HOME_EVENTS[name]))
    bot.drain()
    ok = slack_requests.event_callback({"type": "app_home_opened", "user": APPROVER, "channel": "D1", "tab": "home"})
    assert bot.poster.post_event(ok).status == 200
    bot.drain()
    assert any(call.ok and call.args.get("user_id") == APPROVER for call in bot.slack.calls("views.publish"))
    assert result.status < 500, (result.status, result.body[:300])


RAW_FORMS = {
    "payload_list": b"payload=%5B1%2C2%5D",
    "payload_string": b"payload=%22x%22",
    "payload_deep": b"payload=" + b"%5B" * 50_000 + b"%5D" * 50_000,
    "payload_deep_value": (
        b'payload={"type":"block_actions","user":{"id":"U0APPROVER"},"actions":[{"action_id":"signoff_approve","value":'
        + b"[" * 50_000
        + b"]" * 50_000
        + b"}]}"
    ),
    "payload_not_utf8": b"payload=%FF%FE%7B%7D",
    "command_not_utf8": b"command=%2Fagent&text=%FF%FE&user_id=U0REQUESTER&channel_id=C0OPS&team_id=T0TEST",
    "payload_twice": b'payload={"type":"block_actions"}&payload={"type":"view_submission"}',
    "view_submission_view_list": b'payload={"type":"view_submission","view":[]}',
    "shortcut_no_callback": b'payload={"type":"shortcut"}',
    "message_action_bare": b'payload={"type":"message_action"}',
    "block_suggestion_bare": b'payload={"type":"block_suggestion"}',
}


@pytest.mark.parametrize("name", sorted(RAW_FORMS))
def test_odd_raw_forms_are_4xx_or_handled_never_500(bot: Bot, name: str) -> None:
    result = bot.poster.post_raw(RAW_FORMS[name], "application/x-www-form-urlencoded")
    bot.drain()
    assert result.status < 500, (result.status, result.body[:300])


_EV = '{"type":"event_callback","team_id":%s,%s"event":%s}'


def _event(event: str, *, team: str = '"T0TEST"', extra: str = "") -> bytes:
    return (_EV % (team, extra, event)).encode()


_MENTION = '{"type":"app_mention","channel":"C0OPS","user":"U1",%s}'

RAW_JSON = {
    "event_list": _event('{"type":"message","channel":"C0OPS","user":"U1","ts":"1.0","thread_ts":[1]}'),
    "event_bad_team": _event(_MENTION % '"ts":"1.0","text":"hi"', team="5"),
    "mention_no_ts": _event(_MENTION % '"text":"hi"'),
    "mention_text_int": _event(_MENTION % '"ts":"1.5","text":5'),
    "authorizations_str": _event(_MENTION % '"ts":"1.6","text":"hi"', extra='"authorizations":"x",'),
    "url_verification_no_challenge": b'{"type":"url_verification"}',
    "surrogate": _event(_MENTION % '"ts":"1.7","text":"\\ud800"'),
}


@pytest.mark.parametrize("name", sorted(RAW_JSON))
def test_odd_raw_events_are_4xx_or_handled_never_500(bot: Bot, name: str) -> None:
    result = bot.poster.post_raw(RAW_JSON[name], "application/json")
    bot.drain()
    assert result.status < 500, (result.status, result.body[:300])
