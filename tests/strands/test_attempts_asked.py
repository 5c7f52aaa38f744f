"""Invariant 4 (Once) beside the other ways Strands asks a person about a call: ``SignoffGate`` with them.

The docs' agent gates its risky tools with ``SignoffGate``, and its other tools may ask for themselves as the Strands
docs write it: a tool's ``tool_context.interrupt``, a ``BeforeToolCallEvent`` hook's ``event.interrupt``, Strands'
``HumanInTheLoop``. Such a call has not run while a person is asked about it. Before, the gate marked it started
anyway (Strands runs every hook even after one asked; a tool that asks stops with no after-call event), so the
person's answer was followed by a second question, "a previous attempt may have run", for a call that never ran.

Without ``SignoffGate`` (Strands' own human-in-the-loop, as our docs show it), the bot's runner gives the agent the
same at-most-once rules: before, a worker that died inside an approved call ran it again on the redelivered job.
"""

import contextlib
from typing import Any

import pytest
import strands
from strands import ToolContext
from strands.tools.executors import SequentialToolExecutor
from strands.vended_interventions.hitl import HumanInTheLoop
from strands.vended_tools import handoff_to_user

from agent import ScriptedModel
from agent.attempts import RERUN_INTERRUPT, STARTED_CALLS, mark_started
from agent.models.scripted import text_turn, tool_turn
from agent.strands_bridge import SignoffGate, StrandsRunnable, signoff_session_manager
from state import SessionStore
from tests.agent.support import WorkerDied
from tests.strands.agents import StrandsScriptedModel, once_then
from tests.strands.multi_agents import ApprovalHook

SID = "T0TEST:C0OPS:1700000000.000500"


class _Deletions:
    """An agent with the docs' ``SignoffGate`` on ``restart_service`` and a ``delete_files`` asked about otherwise."""

    def __init__(self, store: SessionStore, asker: str, *, gated: bool) -> None:
        self.store = store
        self.asker = asker
        self.gated = gated
        self.runs = 0
        self.die_next = False

    def runnable(self) -> StrandsRunnable:
        asks_itself = self.asker == "tool"

        @strands.tool(context=True)
        def delete_files(paths: list[str], tool_context: ToolContext) -> str:
            """Delete files.

            Args:
                paths: The files.
            """
            if asks_itself and tool_context.interrupt("delete-approval", reason={"paths": paths}) != "y":
                return "not deleted: no approval"
            self.runs += 1
            if self.die_next:
                self.die_next = False
                raise WorkerDied  # past the person's answer, it took effect; the worker died before the result
            return f"deleted {' '.join(paths)}"

        @strands.tool
        def restart_service(service: str) -> str:
            """Restart a service.

            Args:
                service: Service name.
            """
            return f"{service}: restarted"

        hooks: list[Any] = [SignoffGate({"restart_service": "production-changes"})] if self.gated else []
        if self.asker == "hook":
            hooks.append(ApprovalHook())  # after the gate: Strands runs the gate's callback first
        agent = strands.Agent(
            model=StrandsScriptedModel(once_then(tool_turn(("t1", "delete_files", {"paths": ["/tmp/a"]})))),
            tools=[delete_files, restart_service],
            hooks=hooks,
            interventions=[HumanInTheLoop(allowed_tools=["restart_service"])] if self.asker == "hitl" else [],
            session_manager=signoff_session_manager(SID, self.store),
            tool_executor=SequentialToolExecutor(),
            callback_handler=None,
        )
        return StrandsRunnable(agent)

    def asked(self) -> list[dict[str, Any]]:
        """Ask; the answer ``"y"`` to the one question."""
        stopped = self.runnable()("delete /tmp/a")
        [question] = stopped.interrupts
        assert question.name != RERUN_INTERRUPT
        stored = self.store.load(SID)
        assert stored is not None
        assert STARTED_CALLS not in stored.agent_state  # asked about, not started
        return [{"interruptResponse": {"interruptId": question.id, "response": "y"}}]


ASKERS = pytest.mark.parametrize("asker", ["tool", "hook", "hitl"])
GATED = pytest.mark.parametrize("gated", [True, False], ids=["with-gate", "without-gate"])


@ASKERS
@GATED
def test_a_call_a_person_is_asked_about_runs_once_on_the_answer_without_a_second_question(
    store: SessionStore, asker: str, gated: bool
) -> None:
    deletions = _Deletions(store, asker, gated=gated)
    answer = deletions.asked()

    result = deletions.runnable()(answer)  # a fresh worker, as the bot's resume job

    assert (result.stop_reason, result.interrupts, deletions.runs) == ("end_turn", [], 1)
    stored = store.load(SID)
    assert stored is not None
    assert STARTED_CALLS not in stored.agent_state


@ASKERS
@GATED
def test_a_call_that_died_after_the_answer_is_asked_about_again_not_rerun(
    store: SessionStore, asker: str, gated: bool
) -> None:
    # Without a gate too: the bot's runner keeps the agent's calls at most once (before, an approved call ran again).
    deletions = _Deletions(store, asker, gated=gated)
    answer = deletions.asked()
    deletions.die_next = True
    with contextlib.suppress(WorkerDied):
        deletions.runnable()(answer)

    stopped = deletions.runnable()(answer)  # the resume job, redelivered

    assert deletions.runs == 1
    [question] = stopped.interrupts
    assert (question.name, question.reason["toolUseId"]) == (RERUN_INTERRUPT, "t1")


def test_a_handoff_answered_and_lost_with_its_worker_is_answered_again_not_asked_about(store: SessionStore) -> None:
    # Strands' handoff_to_user only returns the person's answer: running it again is harmless, so a worker that died
    # in it leaves no "may have run" question about it.
    deploys: list[str] = []

    def runnable() -> StrandsRunnable:
        @strands.tool
        def deploy(region: str) -> str:
            """Deploy the service.

            Args:
                region: Where to.
            """
            deploys.append(region)
            return f"deployed to {region}"

        def ask_then_deploy(messages: list[Any]) -> Any:
            answers = [
                content["text"]
                for message in messages
                for block in message["content"]
                if "toolResult" in block
                for content in block["toolResult"]["content"]
            ]
            if not answers:
                return tool_turn(("h1", "handoff_to_user", {"message": "Which region?"}))
            return tool_turn(("d1", "deploy", {"region": answers[0]})) if len(answers) == 1 else text_turn(answers[-1])

        return StrandsRunnable(
            strands.Agent(
                model=StrandsScriptedModel(ScriptedModel(ask_then_deploy)),
                tools=[handoff_to_user, deploy],
                session_manager=signoff_session_manager(SID, store),
                callback_handler=None,
            )
        )

    [question] = runnable()("deploy").interrupts
    answer = [{"interruptResponse": {"interruptId": question.id, "response": "eu-west-1"}}]
    dying = runnable().agent  # what a worker killed inside the tool leaves: the call started, no result recorded
    mark_started(dying.state, "h1")
    dying._session_manager.sync_agent(dying)

    result = runnable()(answer)  # the job, redelivered

    assert (result.stop_reason, str(result), deploys) == ("end_turn", "deployed to eu-west-1", ["eu-west-1"])
