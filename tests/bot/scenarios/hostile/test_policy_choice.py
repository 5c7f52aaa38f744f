"""Red team: the policy applied to a batch is chosen by rule order, not by what the batch holds."""

import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

from agent import Agent, BeforeToolsEvent, HookRegistry, tool
from agent.models.scripted import ScriptedModel, text_turn, tool_turn
from bot.render import action_ids as ids
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER


def _reads_first(tmp_path: Path, reads: str) -> Path:
    """A policy whose open "reads" rule (its keys ``reads``, in YAML) comes before the lead-only "destructive" one."""
    path = tmp_path / "policy.yml"
    path.write_text(
        "default:\n  approvers: {}\nrules:\n"
        f"  - name: reads\n{textwrap.indent(textwrap.dedent(reads).strip(), '    ')}\n"
        "  - name: destructive\n    match: {tools: [delete_files]}\n    approvers:\n      users: [U0LEAD]\n"
    )
    return path


READ_LOGS = """
    match: {tools: [read_logs]}
    approvers: {}
"""


def _batch_gated_agent(*, session_id: str, store: Any) -> Agent:
    @tool
    def read_logs(service: str) -> str:
        """Read logs."""
        return "logs"

    @tool
    def delete_files(path: str) -> str:
        """Delete files."""
        return "deleted"

    def review(event: BeforeToolsEvent) -> None:
        answer = event.interrupt("batch_review", reason="review this batch")
        if not (isinstance(answer, dict) and answer.get("decision") == "approve"):
            event.cancel = "denied"

    class Provider:
        def register_hooks(self, hooks: HookRegistry) -> None:
            hooks.add_callback(BeforeToolsEvent, review)

    def respond(messages: list[Any]) -> Any:
        has_results = any("toolResult" in block for block in messages[-1]["content"])
        if has_results:
            return text_turn("done")
        return tool_turn(("t1", "read_logs", {"service": "api"}), ("t2", "delete_files", {"path": "/srv"}))

    return Agent(
        ScriptedModel(respond), [read_logs, delete_files], hooks=[Provider()], session_id=session_id, store=store
    )


@contextmanager
def _asked(
    redis_client: redis.Redis, policy: Path, agent: Callable[..., Any], request: str, **options: Any
) -> Iterator[tuple[Bot, str]]:
    """A bot running ``agent`` under ``policy``, asked ``request`` and settled; it and the newest approval's id."""
    with running_bot(redis_client, agent_factory=agent, policy_path=policy, **options) as bot:
        bot.mention(request)
        bot.drain()
        yield bot, bot.approval_id(-1)


def _assert_an_approvers_click_decides_nothing(bot: Bot, approval_id: str) -> None:
    """Only U0LEAD may approve the batch: the approver's click is answered and leaves it undecided."""
    assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
    bot.drain()
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None, f"approved under rule {approval.request.policy.name!r}"


def test_a_batch_holding_a_destructive_call_is_not_judged_by_the_read_rule(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    """Authorized: the batch holds delete_files (only U0LEAD); the earlier 'reads' rule must not let anyone approve."""
    with _asked(redis_client, _reads_first(tmp_path, READ_LOGS), _batch_gated_agent, "clean up") as (bot, approval_id):
        approval = bot.services.stores.approvals.find(approval_id)
        assert approval is not None
        assert {call.tool for call in approval.request.calls} == {"read_logs", "delete_files"}
        _assert_an_approvers_click_decides_nothing(bot, approval_id)


INSPECT_FILES = """
    match: {tools: [inspect_files]}
    approvers: {}
"""


def test_a_strands_batch_holding_delete_files_is_not_judged_by_the_read_rule(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    """Authorized, real strands.Agent with a BeforeToolsEvent hook: 'clean' asks delete_files + inspect_files."""
    from tests.strands.native import batch_agent

    policy = _reads_first(tmp_path, INSPECT_FILES)
    with _asked(redis_client, policy, batch_agent, "clean /srv/data") as (bot, approval_id):
        _assert_an_approvers_click_decides_nothing(bot, approval_id)


LOW_RISK_READ_LOGS = """
    match: {tools: [read_logs]}
    low_risk: true
    expiry: {after: 1h, outcome: approve}
"""


def test_a_batch_holding_a_destructive_call_never_auto_approves_on_expiry(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    """Authorized/Once: the low-risk rule of read_logs must not auto-approve delete_files in the same batch."""
    from bot.domain.clock import ManualClock

    clock = ManualClock()
    low_risk_reads = _reads_first(tmp_path, LOW_RISK_READ_LOGS)
    with _asked(redis_client, low_risk_reads, _batch_gated_agent, "clean up", clock=clock) as (bot, approval_id):
        clock.advance(2 * 3600)
        bot.drain()
        approval = bot.services.stores.approvals.find(approval_id)
        assert approval is not None
        assert approval.decision is None or approval.decision.decision != "approve", approval.decision
