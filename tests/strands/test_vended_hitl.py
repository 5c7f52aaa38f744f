"""Strands' ``HumanInTheLoop`` behind the bot, as Strands users write it: no key in the agent or the policy.

Its default ``evaluate`` approves only on ``True``, ``"y"`` or ``"yes"``; before the bot knew it by name
it was resumed with the decision record, and every call (approved or not) was cancelled.
"""

from pathlib import Path

import redis

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER, SECOND_APPROVER
from tests.redis_targets import on_both
from tests.strands.native import completions
from tests.strands.vended import hitl_agent, hitl_agent_inspections_free

pytest_generate_tests = on_both  # every case on one server and on a cluster


def _by_tool(bot: Bot) -> dict[str, str]:
    approvals = {}
    for index in range(len(bot.approval_messages())):
        approval = bot.services.stores.approvals.find(bot.approval_id(index))
        assert approval is not None
        approvals[str(approval.request.tool)] = bot.approval_id(index)
    return approvals


def test_an_approved_call_runs_and_the_model_gets_its_result(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=hitl_agent_inspections_free) as bot:
        bot.mention("clean /tmp/a")  # delete_files waits; inspect_files is allowed and runs freely
        bot.drain()
        [message] = bot.approval_messages()
        text = str(message["blocks"])
        assert "Approval needed: delete_files" in text
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.request.interrupt_name == "strands:human-in-the-loop"
        assert approval.request.response_shape == "yes_no"

        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()

        assert sorted(bot.texts_posted()[-1].split(" | ")) == ["deleted /tmp/a", "inspected /tmp/a"]
        assert completions(redis_client, "delete_files") == 1
        assert "CONFIRMATION_FAILED" not in " ".join(bot.texts_posted())


def test_two_gated_calls_each_get_their_own_answer_and_a_denial_tells_the_model_who_and_why(
    redis_client: redis.Redis,
) -> None:
    with running_bot(redis_client, agent_factory=hitl_agent) as bot:
        bot.mention("clean /tmp/a")
        bot.drain()
        approvals = _by_tool(bot)
        assert set(approvals) == {"delete_files", "inspect_files"}

        bot.click(ids.APPROVE_ACTION, approvals["inspect_files"], user=APPROVER)
        bot.click(ids.DENY_ACTION, approvals["delete_files"], user=SECOND_APPROVER)
        assert bot.submit_deny(approvals["delete_files"], user=SECOND_APPROVER, reason="not on a Friday").status == 200
        bot.drain()

        results = bot.texts_posted()[-1].split(" | ")
        assert "inspected /tmp/a" in results
        [refusal] = [result for result in results if result != "inspected /tmp/a"]
        # The prefix Strands users match on stays; the words are who refused and why, not the prompt again (the
        # model repeats what it was told, and the thread shows people Signoff's account of that refusal).
        assert refusal == "CONFIRMATION_FAILED: Not run: <@U0SECOND> denied it: not on a Friday"
        assert completions(redis_client, "inspect_files") == 1
        assert completions(redis_client, "delete_files") == 0


def test_an_expired_request_is_told_as_expired_not_as_a_denial(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        "rules:\n  - name: deletions\n    match: {tools: [delete_files]}\n    expiry: {after: 10m, outcome: deny}\n"
    )
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=hitl_agent_inspections_free, policy_path=policy, clock=clock) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        clock.advance(11 * 60)
        bot.drain()

        reply = bot.texts_posted()[-1]
        assert reply == "CONFIRMATION_FAILED: Not run: nobody decided in time."  # the thread's account of it
        assert "denied" not in reply
        assert completions(redis_client, "delete_files") == 0


def test_a_rule_may_still_choose_the_record(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text("rules:\n  - name: deletions\n    match: {tools: [delete_files]}\n    response: record\n")
    with running_bot(redis_client, agent_factory=hitl_agent_inspections_free, policy_path=policy) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.request.response_shape == "record"  # what the operator asked for, whatever it costs
