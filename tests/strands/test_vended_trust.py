"""Strands' ``HumanInTheLoop(enable_trust=True)``: "Approve and trust <tool> for this session", and revoking it.

Strands accepts ``"t"`` and keeps the tool in ``agent.state``; Signoff keeps its own record, lists it on App Home
and, once it is revoked there, removes the tool from the agent's state before the agent runs again.
"""

import json
from pathlib import Path
from typing import Any

import redis

from agent.strands_bridge import DEFAULT_AGENT_ID, RedisSessionRepository
from bot.render import action_ids as ids
from loopback_slack import slack_requests
from tests.bot.support.harness import Bot, home_click, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER
from tests.redis_targets import on_both
from tests.strands.native import completions
from tests.strands.vended import hitl_agent_inspections_free, trusting_agent

pytest_generate_tests = on_both  # every case on one server and on a cluster

TRUST_LABEL = "Approve and trust delete_files for this session"


def _forged_trust_click(bot: Bot, message: dict[str, Any]) -> int:
    """An "Approve and trust" click crafted from ``message``'s Approve button, where no trust button is shown; its
    HTTP status."""
    approve = next(e["value"] for e in message["blocks"][-1]["elements"] if e["action_id"] == ids.APPROVE_ACTION)
    payload = slack_requests.block_actions(
        action_id=ids.TRUST_ACTION,
        user_id=APPROVER,
        channel_id=CHANNEL,
        message_ts=str(message["ts"]),
        value=approve,
        thread_ts=str(message["thread_ts"]),
    )
    return bot.poster.post_action(payload).status


def _buttons(message: dict[str, Any]) -> dict[str, str]:
    return {element["action_id"]: element["text"]["text"] for element in message["blocks"][-1]["elements"]}


def _trusted_in_state(redis_client: redis.Redis, session_id: str) -> Any:
    """What the agent's own state (as Strands persisted it) holds as trusted tools."""
    agent = RedisSessionRepository(redis_client).read_agent(session_id, DEFAULT_AGENT_ID)
    assert agent is not None
    return agent.state.get("hitl:trusted_tools")


def _trust_delete(bot: Bot) -> str:
    """Ask to delete /tmp/a, trust the tool; the thread."""
    bot.mention("delete /tmp/a")
    bot.drain()
    [message] = bot.approval_messages()
    assert _buttons(message)[ids.TRUST_ACTION] == TRUST_LABEL
    assert bot.click(ids.TRUST_ACTION, bot.approval_id(), user=APPROVER).status == 200
    bot.drain()
    return str(message["thread_ts"])


def _revoke_buttons(home: dict[str, Any]) -> list[dict[str, Any]]:
    return [block for block in home["blocks"] if block.get("accessory", {}).get("action_id") == ids.REVOKE_TRUST_ACTION]


def test_trusting_runs_the_call_and_the_next_ones_of_the_session_without_asking(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=trusting_agent) as bot:
        thread_ts = _trust_delete(bot)
        assert bot.texts_posted()[-1] == "deleted /tmp/a"
        [message] = bot.approval_messages()
        assert is_decided(message)
        assert "the tool trusted for the rest of this session" in json.dumps(message["blocks"])
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.decision is not None
        assert approval.decision.trusted
        [decided] = [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]
        assert decided.details["trusted"]

        bot.mention("delete /tmp/b", thread_ts=thread_ts)
        bot.drain()
        assert len(bot.approval_messages()) == 1  # not asked again
        assert bot.texts_posted()[-1] == "deleted /tmp/b"
        assert completions(redis_client, "delete_files") == 2


def test_app_home_lists_the_trust_and_revoking_it_makes_the_agent_ask_again(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=trusting_agent) as bot:
        thread_ts = _trust_delete(bot)
        session_id = bot.services.stores.approvals.session_of(bot.approval_id())
        assert session_id is not None
        assert _trusted_in_state(redis_client, session_id) == ["delete_files"]
        for person in (APPROVER, REQUESTER):  # who trusted it, and whose requests it serves
            [entry] = _revoke_buttons(bot.open_home(person))
            assert "`delete_files` trusted for the rest of the agent's session" in entry["text"]["text"]
        assert _revoke_buttons(bot.open_home("U0OUTSIDER")) == []

        [entry] = _revoke_buttons(bot.open_home(APPROVER))
        value = entry["accessory"]["value"]
        assert bot.poster.post_action(home_click(ids.REVOKE_TRUST_ACTION, value, user="U0OUTSIDER")).status == 200
        bot.drain()
        assert bot.services.stores.trusts.tools(session_id) == {"delete_files"}  # not theirs to end

        assert bot.poster.post_action(home_click(ids.REVOKE_TRUST_ACTION, value, user=APPROVER)).status == 200
        bot.drain()
        assert _revoke_buttons(bot.open_home(APPROVER)) == []
        bot.mention("delete /tmp/c", thread_ts=thread_ts)
        bot.drain()

        assert len(bot.approval_messages()) == 2  # asked again
        assert not is_decided(bot.approval_messages()[-1])
        assert completions(redis_client, "delete_files") == 1
        assert _trusted_in_state(redis_client, session_id) == []
        revoked = [entry for entry in bot.services.stores.audit.entries() if entry.event == "trust_revoked"]
        assert [entry.actor for entry in revoked] == [APPROVER]


def test_trust_is_offered_only_where_the_agent_enabled_it_and_the_rule_allows_it(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    with running_bot(redis_client, agent_factory=hitl_agent_inspections_free) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        assert ids.TRUST_ACTION not in _buttons(bot.approval_messages()[0])
    policy = tmp_path / "policy.yml"
    policy.write_text("rules:\n  - name: deletions\n    match: {tools: [delete_files]}\n    trust: false\n")
    redis_client.flushall()
    with running_bot(redis_client, agent_factory=trusting_agent, policy_path=policy) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        assert ids.TRUST_ACTION not in _buttons(bot.approval_messages()[0])


def test_a_forged_trust_click_where_none_is_offered_records_nothing(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=hitl_agent_inspections_free) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        message = bot.approval_messages()[0]
        assert _forged_trust_click(bot, message) == 200
        bot.drain()
        assert not is_decided(bot.approval_messages()[0])
        assert completions(redis_client, "delete_files") == 0


_CONDITIONAL_RULES = """\
rules:
  - name: system-files
    match: {tools: [delete_files], when: 'args.paths.exists(p, p.startsWith("/etc"))'}
    tier: deny
    message: Never delete system files.
  - name: deletions
    match: {tools: [delete_files]}
"""


def test_no_trust_is_offered_for_a_tool_whose_calls_other_rules_may_take(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    # A trust skips every later call of the tool in the session (the agent asks nobody, so no rule is weighed):
    # trusting delete_files for /tmp/a must not let /etc/passwd past the rule that refuses it.
    policy = tmp_path / "policy.yml"
    policy.write_text(_CONDITIONAL_RULES)
    with running_bot(redis_client, agent_factory=trusting_agent, policy_path=policy) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        message = bot.approval_messages()[0]
        assert ids.TRUST_ACTION not in _buttons(message)
        assert _forged_trust_click(bot, message) == 200  # a trust click crafted by hand is refused as well
        bot.drain()
        assert not is_decided(bot.approval_messages()[0])
        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
        bot.drain()
        bot.mention("delete /etc/passwd", thread_ts=str(message["thread_ts"]))
        bot.drain()
        assert "Never delete system files." in json.dumps(bot.approval_messages()[-1]["blocks"])
        assert completions(redis_client, "delete_files") == 1


def test_a_trust_serves_only_the_requester_it_was_made_for(redis_client: redis.Redis) -> None:
    # Whoever mentions the bot in the thread becomes its requester: the approver who trusted the tool for the
    # requester's calls must not then run their own calls unasked (self-approval), nor may anyone else; the
    # requester's next call still runs on the trust.
    with running_bot(redis_client, agent_factory=trusting_agent) as bot:
        thread_ts = _trust_delete(bot)
        bot.mention("delete /tmp/b", user=APPROVER, thread_ts=thread_ts)
        bot.drain()
        assert len(bot.approval_messages()) == 2  # asked
        assert not is_decided(bot.approval_messages()[-1])
        assert completions(redis_client, "delete_files") == 1
        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=REQUESTER).status == 200  # someone else
        bot.drain()
        assert completions(redis_client, "delete_files") == 2

        bot.mention("delete /tmp/c", thread_ts=thread_ts)
        bot.drain()
        assert len(bot.approval_messages()) == 2  # the requester's call: not asked again
        assert bot.texts_posted()[-1] == "deleted /tmp/c"
        assert completions(redis_client, "delete_files") == 3
