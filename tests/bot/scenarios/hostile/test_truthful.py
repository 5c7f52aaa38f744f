"""Red team: what people read is escaped, hidden characters visible, and within Slack's limits."""

import json
from typing import Any

import pytest
import redis

from bot.render import action_ids as ids
from tests.bot.scenarios.hostile.limits import block_problems, view_problems
from tests.bot.support.agents import answering_agent, gated_calls, one_gated_call
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER

RLO = "\u202e"


def _failed_calls(bot: Bot) -> list[Any]:
    return [(call.method, call.response.get("error")) for call in bot.slack.calls() if not call.ok]


def _every_text(bot: Bot) -> str:
    """Everything the bot sent Slack that a person reads."""
    shown = []
    for call in bot.slack.calls():
        for name in ("text", "blocks", "view"):
            if name in call.args:
                shown.append(json.dumps(call.args[name], ensure_ascii=False))
    return "\n".join(shown)


ANSWERS = {
    "rlo_flood": RLO * 100_000,
    "backticks": "`" * 50_000,
    "fences_and_escapes": ("```\n<!channel> & <@U1>\n" * 4000),
    "zero_width_words": ("ok\u200b" * 30_000),
    "one_long_line": "a" * 200_000,
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_hostile_agent_answers_are_posted_within_limits(redis_client: redis.Redis, name: str) -> None:
    with running_bot(redis_client, agent_factory=answering_agent(ANSWERS[name])) as bot:
        bot.mention("hi")
        bot.drain()
        assert _failed_calls(bot) == []
        posted = bot.slack.calls("chat.postMessage")
        assert posted
        for call in posted:
            assert block_problems(call.args.get("blocks", []), max_blocks=50) == []
        shown = _every_text(bot)
        assert RLO not in shown
        assert "\u200b" not in shown.replace("`\\u200b`", "")
        assert "<!channel>" not in shown


def test_deny_reason_with_hidden_characters_and_mrkdwn_is_shown_inert_on_the_decided_message(bot: Bot) -> None:
    approval_id, _ = bot.ask()
    reason = f"<!channel> see <https://evil.example|docs> file {RLO}gpj.exe"
    assert bot.submit_deny(approval_id, user=APPROVER, reason=reason).status == 200
    bot.drain()
    assert _failed_calls(bot) == []
    updates = list(bot.slack.calls("chat.update"))
    assert updates
    shown = _every_text(bot)
    assert RLO not in shown
    assert "<!channel>" not in shown
    assert "<https://evil.example|docs>" not in shown


def test_long_typed_deny_reason_keeps_the_decided_message_within_limits(bot: Bot) -> None:
    approval_id, _ = bot.ask()
    thread_ts = str(bot.approval_messages()[-1]["thread_ts"])
    assert bot.reply("deny: " + ("\u200b<x>" * 9000), user=APPROVER, thread_ts=thread_ts).status == 200
    bot.drain()
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is not None
    assert _failed_calls(bot) == []


def test_deny_modal_for_a_long_hidden_tool_name_is_within_view_limits(redis_client: redis.Redis) -> None:
    name = RLO * 300 + "x" * 300
    with running_bot(redis_client, agent_factory=one_gated_call(name, {"p": 1})) as bot:
        bot.mention("go")
        bot.drain()
        approval_id = bot.approval_id(-1)
        assert bot.click(ids.DENY_ACTION, approval_id, user=APPROVER).status == 200
        bot.drain()
        [opened] = bot.slack.wait_for("views.open", timeout=15)  # a lazy listener opens it, after the ack
        assert view_problems(opened.args["view"], max_blocks=100) == []
        assert RLO not in json.dumps(opened.args["view"], ensure_ascii=False)
        assert _failed_calls(bot) == []
        assert block_problems(bot.approval_messages()[-1]["blocks"], max_blocks=50) == []


def test_approvals_command_answer_is_within_the_message_text_limit(redis_client: redis.Redis) -> None:
    """Slack limits: /approvals in a channel with many requests whose tool names are long."""
    calls = [(f"t{i}", "x" * 61 + f"{i:03d}", {"n": i}) for i in range(200)]  # 64 characters: the providers' maximum
    with running_bot(redis_client, agent_factory=gated_calls(calls)) as bot:
        bot.mention("deploy everything")
        bot.drain()
        assert len(bot.approval_messages()) == 200
        text = bot.slash_approvals()
        assert len(text) <= 40_000, len(text)


def _mrkdwn_texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [str(node["text"])] if node.get("type") == "mrkdwn" else []
        return own + [t for value in node.values() for t in _mrkdwn_texts(value)]
    if isinstance(node, list):
        return [t for value in node for t in _mrkdwn_texts(value)]
    return []


def test_a_newline_in_a_tool_name_cannot_break_out_of_its_inline_code(redis_client: redis.Redis) -> None:
    """Truthful: inline code cannot span lines in Slack; a name with a newline would render the rest as mrkdwn."""
    import re

    name = "deploy\n> :white_check_mark: *Already approved by security*"
    with running_bot(redis_client, agent_factory=one_gated_call(name, {"p": 1})) as bot:
        bot.mention("go")
        bot.drain()
        assert bot.approval_messages()
        broken = [
            text
            for call in bot.slack.calls("chat.postMessage")
            for text in _mrkdwn_texts(call.args.get("blocks", []))
            if re.search(r"`[^`\n]*\n", text) and "```" not in text
        ]
        assert broken == []
