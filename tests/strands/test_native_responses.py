"""What the agent receives, and what happens when its own code cannot read it.

Strands' documented hook reads ``"y"``; a tool may want a boolean. The policy rule (``response``)
or the interrupt's reason (``"response"`` key) chooses; the default is Signoff's decision record.
A hook that chokes on the response is not retried: the thread is told at once, and the session
resumes after the fix.
"""

from pathlib import Path

import redis

from bot.cli import ops as ops_cli
from bot.render import action_ids as ids
from tests.bot.support import shards
from tests.bot.support.harness import Bot, is_decided, running_bot, thread_session
from tests.bot.support.people import APPROVER
from tests.strands.agents import OPERATIONS, Factory, on_both_runtimes
from tests.strands.lead_rule import (
    LEAD,
    blocks_text,
    deleted_once_the_lead_approves,
    the_approval_asked_for,
)
from tests.strands.native import (
    DENIED,
    FIXED_KEY,
    completions,
    hook_agent,
    hook_agent_dict_reason,
    hook_agent_two_gates,
    own_gated_run_agent,
    own_hook_agent,
    own_hook_agent_two_gates,
    own_tool_agent,
    tool_agent,
)

HOOK = on_both_runtimes(own_hook_agent, hook_agent)
TWO_GATES = on_both_runtimes(own_hook_agent_two_gates, hook_agent_two_gates)


def _policy(tmp_path: Path, *, response: str | None = "yes_no") -> Path:
    path = tmp_path / "policy.yml"
    shape = f"    response: {response}\n" if response else ""
    path.write_text(
        "rules:\n"
        "  - name: deletions\n"
        "    match: {tools: [delete_files]}\n"
        f"    approvers: {{users: [{LEAD}]}}\n"
        f"{shape}"
        "  - name: inspections\n"
        "    match: {tools: [inspect_files]}\n"
        f"{shape}"
    )
    return path


def _session(bot: Bot) -> str:
    return thread_session(bot.approval_messages()[0]["thread_ts"])


@HOOK
def test_the_docs_hook_works_when_its_rule_answers_y_or_n(
    redis_client: redis.Redis, tmp_path: Path, factory: Factory
) -> None:
    with running_bot(redis_client, agent_factory=factory, policy_path=_policy(tmp_path)) as bot:
        deleted_once_the_lead_approves(bot, redis_client)
        assert bot.texts_posted()[-1] == "deleted /tmp/a"


@TWO_GATES
def test_two_interrupts_in_one_turn_each_names_its_call(
    redis_client: redis.Redis, tmp_path: Path, factory: Factory
) -> None:
    with running_bot(redis_client, agent_factory=factory, policy_path=_policy(tmp_path)) as bot:
        bot.mention("clean /tmp/a")
        bot.drain()
        # Concurrent calls interrupt in whichever order they reach their hooks.
        by_tool = {}
        for index, message in enumerate(bot.approval_messages()):
            approval = bot.services.stores.approvals.find(bot.approval_id(index))
            assert approval is not None
            by_tool[approval.request.tool] = (bot.approval_id(index), blocks_text(message))
        assert set(by_tool) == {"delete_files", "inspect_files"}
        delete_id, delete_text = by_tool["delete_files"]
        inspect_id, inspect_text = by_tool["inspect_files"]
        assert "Approval needed: delete_files" in delete_text
        assert "deletions" in delete_text
        assert "Approval needed: inspect_files" in inspect_text
        assert "inspections" in inspect_text

        bot.click(ids.APPROVE_ACTION, inspect_id, user=APPROVER)
        assert bot.click(ids.DENY_ACTION, delete_id, user=LEAD).status == 200
        assert bot.submit_deny(delete_id, user=LEAD, reason="not today").status == 200
        bot.drain()

        assert sorted(bot.texts_posted()[-1].split(" | ")) == [DENIED, "inspected /tmp/a"]
        assert completions(redis_client, "delete_files") == 0
        assert completions(redis_client, "inspect_files") == 1


@on_both_runtimes(own_tool_agent, tool_agent)
def test_a_tool_asks_for_a_boolean_with_its_reason(redis_client: redis.Redis, factory: Factory) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        [message] = bot.approval_messages()
        assert "Approval needed: delete_files" in blocks_text(message)
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.request.response_shape == "boolean"
        assert approval.request.interrupt_id.startswith("v1:tool_call:t1:")

        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()

        assert bot.texts_posted()[-1] == "deleted /tmp/a"
        assert completions(redis_client, "delete_files") == 1


def test_a_reason_whose_tool_is_not_a_string_is_published(redis_client: redis.Redis, tmp_path: Path) -> None:
    with running_bot(redis_client, agent_factory=hook_agent_dict_reason, policy_path=_policy(tmp_path)) as bot:
        text = the_approval_asked_for(bot, "delete /tmp/a")
        assert "Approval needed: delete_files" in text
        assert "deletions" in text  # the call's tool decides, not what the reason says
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=LEAD)
        bot.drain()
        assert completions(redis_client, "delete_files") == 1


def test_an_interrupt_guarding_no_call_says_so_and_gets_only_name_rules_and_the_default(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        f"rules:\n  - name: inspections\n    match: {{tools: [inspect_files]}}\n    approvers: {{users: [{LEAD}]}}\n"
    )
    with running_bot(redis_client, agent_factory=own_gated_run_agent, policy_path=policy) as bot:
        text = the_approval_asked_for(bot, "inspect /tmp/a")
        assert "could not be determined" in text
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        # The reason names inspect_files, but a reason is whatever the raiser wrote: not a tool call.
        assert (approval.request.tool, approval.request.calls, approval.request.policy.name) == (None, (), "default")


@HOOK
def test_a_hook_failing_on_the_response_is_not_retried_and_resumes_after_the_fix(
    redis_client: redis.Redis, factory: Factory
) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        bot.worker.claim_idle_ms = 0  # a retry would be claimed at once: prove there is none
        bot.mention("delete /tmp/a")
        bot.drain()
        session_id = _session(bot)
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()

        failures = [text for text in bot.texts_posted() if "failed" in text]
        assert len(failures) == 1
        assert "AttributeError" in failures[0]
        assert "the decision record" in failures[0]
        assert "not retried" in failures[0]
        assert bot.services.stores.jobs.pending_count() == 0
        assert completions(redis_client, "delete_files") == 0
        assert bot.services.stores.sessions.interrupted_sessions() == [session_id]

        redis_client.set(FIXED_KEY, "1")  # the hook is fixed and deployed
        bot.mention("try again", thread_ts=session_id.rsplit(":", 1)[1])
        bot.drain()

        assert bot.texts_posted()[-1] == "deleted /tmp/a"
        assert completions(redis_client, "delete_files") == 1
        assert is_decided(bot.approval_messages()[0])


def test_after_a_hook_failure_the_operator_resume_command_runs_it_again(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=hook_agent) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        session_id = _session(bot)
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert completions(redis_client, "delete_files") == 0

        redis_client.set(FIXED_KEY, "1")
        assert ops_cli._resume(redis_client, session_id) == 0
        bot.drain()

        assert bot.texts_posted()[-1] == "deleted /tmp/a"
        assert completions(redis_client, "delete_files") == 1
        assert shards.audit_length(redis_client) > 0


@OPERATIONS
def test_the_gates_ask_for_the_record_whatever_the_rule_says(
    redis_client: redis.Redis, tmp_path: Path, factory: Factory
) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text("rules:\n  - name: restarts\n    match: {tools: [restart_service]}\n    response: yes_no\n")
    with running_bot(redis_client, agent_factory=factory, policy_path=policy) as bot:
        bot.mention("restart checkout")
        bot.drain()
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert (approval.request.policy.response, approval.request.response_shape) == ("yes_no", "record")
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert bot.texts_posted()[-1] == "checkout: 3 replicas restarted"
        assert completions(redis_client, "restart_service") == 1
