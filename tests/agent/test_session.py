"""An agent bound to its session (``agent.session``) in a real Redis: rebuild elsewhere, crash mid-batch, conflicts,
skipped writes, gates."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent import Agent, ApprovalGate, BeforeInvocationEvent, HookRegistry, ScriptedModel, ToolContext, tool
from agent.models.scripted import text_turn, tool_turn
from agent.session import SessionBinding
from agent.tools import idempotency_key
from state import ConflictError, RedisServer, SessionStore
from state.interrupt import _AGENT_STREAM_INTERRUPT_ID_PREFIX
from tests.agent.support import Recorder, WorkerDied, decision, respond, tool_results

ROOT = Path(__file__).resolve().parents[2]


def _gated_agent(store: SessionStore, session_id: str, recorder: Recorder, model: ScriptedModel) -> Agent:
    return Agent(model, recorder.tools(), hooks=[ApprovalGate(["restart_service"])], session_id=session_id, store=store)


def test_interrupted_session_is_stored_and_listed(store: SessionStore) -> None:
    model = ScriptedModel([tool_turn(("t1", "restart_service", {"service": "api"}))])
    agent = _gated_agent(store, "T1:C1:1700000000.000100", Recorder(), model)

    [interrupt] = agent("restart api").interrupts

    session = store.load("T1:C1:1700000000.000100")
    assert session is not None
    assert session.messages == agent.messages
    assert session.interrupt_state == agent._interrupt_state.to_dict()
    assert session.interrupt_state["activated"] is True
    assert interrupt.id in session.interrupt_state["interrupts"]
    assert store.interrupted_sessions() == ["T1:C1:1700000000.000100"]


def test_an_agent_rebuilt_in_another_process_resumes_without_calling_the_model_for_the_batch(
    store: SessionStore, redis_server: RedisServer
) -> None:
    first_model = ScriptedModel([tool_turn(("t1", "restart_service", {"service": "api"}))])
    [interrupt] = _gated_agent(store, "s-proc", Recorder(), first_model)("restart api").interrupts

    responses = json.dumps([respond(interrupt.id, decision("approve"))])
    completed = subprocess.run(
        [sys.executable, "-m", "tests.agent.resume_elsewhere", redis_server.url, "s-proc", responses],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    report = json.loads(completed.stdout)

    assert report == {
        "stop_reason": "end_turn",
        "text": "finished elsewhere",
        "tools": [["restart_service", "api"]],
        "model_calls": 1,
    }
    session = store.load("s-proc")
    assert session is not None
    assert session.interrupt_state == {"interrupts": {}, "context": {}, "activated": False}
    assert store.interrupted_sessions() == []


def test_a_crash_mid_batch_never_reruns_a_completed_tool(store: SessionStore) -> None:
    runs: list[str] = []
    crash = {"armed": True}

    @tool(idempotent=True)  # it passes its idempotency key on: running it again is harmless
    def step(name: str, tool_context: ToolContext) -> str:
        """One step of a deployment."""
        runs.append(f"{name}:{tool_context.idempotency_key}")
        if name == "second" and crash["armed"]:
            raise WorkerDied
        return f"{name} done"

    batch = tool_turn(("t1", "step", {"name": "first"}), ("t2", "step", {"name": "second"}))
    with pytest.raises(WorkerDied):
        Agent(ScriptedModel([batch]), [step], session_id="s-crash", store=store)("deploy")

    crash["armed"] = False
    model = ScriptedModel([text_turn("deployed")])
    rebuilt = Agent(model, [step], session_id="s-crash", store=store)
    result = rebuilt()

    assert result.stop_reason == "end_turn"
    key_1, key_2 = idempotency_key("s-crash", "t1"), idempotency_key("s-crash", "t2")
    assert runs == [f"first:{key_1}", f"second:{key_2}", f"second:{key_2}"]  # first ran once
    assert set(tool_results(rebuilt.messages[-2])) == {"t1", "t2"}
    assert model.calls == 1


def test_a_crash_before_any_result_was_saved_reruns_the_batch_without_a_model_call(store: SessionStore) -> None:
    runs: list[str] = []

    @tool(idempotent=True)
    def only(name: str) -> str:
        """The only step."""
        runs.append(name)
        if len(runs) == 1:
            raise WorkerDied
        return "done"

    with pytest.raises(WorkerDied):
        Agent(ScriptedModel([tool_turn(("t1", "only", {"name": "x"}))]), [only], session_id="s-c0", store=store)("go")

    model = ScriptedModel([text_turn("ok")])
    Agent(model, [only], session_id="s-c0", store=store)()

    assert runs == ["x", "x"]
    assert model.calls == 1


def test_two_agents_on_one_session_cannot_overwrite_each_other(store: SessionStore) -> None:
    model_script = [text_turn("one"), text_turn("two")]
    first = Agent(ScriptedModel(model_script), [], session_id="s-race", store=store)
    stale = Agent(ScriptedModel(model_script), [], session_id="s-race", store=store)

    first("hello")

    with pytest.raises(ConflictError) as raised:
        stale("hello too")
    assert raised.value.expected_version == 0
    session = store.load("s-race")
    assert session is not None
    assert [message["content"][0]["text"] for message in session.messages] == ["hello", "one"]


def test_writes_are_skipped_when_nothing_moved(store: SessionStore) -> None:
    agent = Agent(ScriptedModel([text_turn("hi")]), [], session_id="s-skip", store=store)
    agent("hello")
    binding = SessionBinding(store, "s-skip")
    messages, agent_state, interrupt_state = binding.load()
    version = binding.version

    assert binding.save(messages, agent_state, interrupt_state) is False
    interrupt_state.end_interrupt_cycle()  # nothing to drop: not a mutation
    assert binding.save(messages, agent_state, interrupt_state) is False
    agent_state.set("seen", True)
    assert binding.save(messages, agent_state, interrupt_state) is True
    assert binding.version == version + 1


class RunGate:
    """An invocation-scoped gate: the whole run needs one approval."""

    def __init__(self) -> None:
        """Count how often the gate was evaluated."""
        self.asked = 0

    def register_hooks(self, hooks: HookRegistry) -> None:
        """Gate every invocation."""
        hooks.add_callback(BeforeInvocationEvent, self._gate)

    def _gate(self, event: BeforeInvocationEvent) -> None:
        self.asked += 1
        event.interrupt("approve_run", reason="run the maintenance playbook")


def _gate_ids(data: dict[str, Any]) -> list[str]:
    return [key for key in data["interrupts"] if key.startswith(_AGENT_STREAM_INTERRUPT_ID_PREFIX)]


def test_an_answered_run_gate_holds_for_its_cycle_and_never_becomes_a_standing_approval(store: SessionStore) -> None:
    recorder = Recorder()
    script = [
        tool_turn(("t1", "delete_volume", {"volume": "v"})),
        text_turn("maintenance done"),
        text_turn("second run"),
    ]
    model = ScriptedModel(script)
    agent = Agent(model, recorder.tools(), hooks=[RunGate()], session_id="s-gate", store=store)

    gate_stop = agent("run maintenance")
    assert gate_stop.stop_reason == "interrupt"
    [gate] = gate_stop.interrupts
    assert gate.id.startswith(_AGENT_STREAM_INTERRUPT_ID_PREFIX)
    assert model.calls == 0  # stopped before the model

    tool_stop = agent([respond(gate.id, "approved")])
    assert [interrupt.name for interrupt in tool_stop.interrupts] == ["confirm_delete"]
    stored = store.load("s-gate")
    assert stored is not None
    assert _gate_ids(stored.interrupt_state) == [gate.id]  # persisted mid-cycle, while activated

    # Another process picks the session up mid-cycle: the gate's answer still holds there.
    rebuilt_gate = RunGate()
    rebuilt = Agent(model, recorder.tools(), hooks=[rebuilt_gate], session_id="s-gate", store=store)
    done = rebuilt([respond(tool_stop.interrupts[0].id, True)])
    assert done.stop_reason == "end_turn"
    assert rebuilt_gate.asked == 1  # evaluated, answered from the stored response, not asked again

    stored = store.load("s-gate")
    assert stored is not None
    assert _gate_ids(stored.interrupt_state) == []  # the cycle ended: nothing left to reuse

    next_run = rebuilt("run it again")
    assert next_run.stop_reason == "interrupt"
    assert [interrupt.id for interrupt in next_run.interrupts] == [gate.id]
