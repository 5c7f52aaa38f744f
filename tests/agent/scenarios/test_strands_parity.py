"""Our agent persists exactly what Strands Agents 1.62 persists for the same conversation.

The same scripted model turns drive a real ``strands.Agent`` (with its file session manager) and
ours (with the Redis store); after the interrupt, the stored messages and interrupt state match,
and each side resumes from the other's stored interrupt state.

Strands annotates each assistant message it streams with ``metadata`` (usage and latency of the
model call) and a random ``tracking_id``; those two keys are removed from its side before the
comparison, since no second run could reproduce them. Everything else must be equal.
"""

import json
from pathlib import Path
from typing import Any

import pytest
import strands
from strands.hooks import BeforeToolCallEvent as StrandsBeforeToolCallEvent
from strands.session import FileSessionManager

from agent import Agent, ApprovalGate, ScriptedModel
from agent.models.scripted import text_turn, tool_turn
from state import SessionStore
from state.interrupt import _InterruptState
from tests.agent.support import Recorder, decision, respond
from tests.strands.agents import StrandsScriptedModel

TURNS = [
    tool_turn(
        ("tooluse_a", "read_logs", {"service": "api", "lines": 5}),
        ("tooluse_b", "restart_service", {"service": "api"}),
        text="Reading logs, then restarting.",
    ),
    text_turn("api restarted"),
]


class StrandsApprovalGate:
    """The same gate as ours (same interrupt name and reason), written against Strands' hooks."""

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(StrandsBeforeToolCallEvent, self.gate)

    def gate(self, event: Any) -> None:
        use = event.tool_use
        if use["name"] == "restart_service":
            reason = {"tool": use["name"], "input": use["input"], "toolUseId": use["toolUseId"], "response": "record"}
            reason["inputSchema"] = event.selected_tool.tool_spec["inputSchema"]["json"]
            answer = event.interrupt("approval", reason=reason)
            if answer.get("decision") != "approve":
                event.cancel_tool = "denied"


def _strands_tools(calls: list[str]) -> list[Any]:
    @strands.tool
    def read_logs(service: str, lines: int = 10) -> dict[str, Any]:
        """Read the last lines of a service's log."""
        calls.append("read_logs")
        return {"service": service, "lines": lines}

    @strands.tool
    def restart_service(service: str) -> str:
        """Restart a service."""
        calls.append("restart_service")
        return f"restarted {service}"

    return [read_logs, restart_service]


def _strands_agent(tmp_path: Path, calls: list[str]) -> tuple[Any, StrandsScriptedModel]:
    model = StrandsScriptedModel(ScriptedModel(TURNS))
    session = FileSessionManager(session_id="parity", storage_dir=str(tmp_path))
    agent = strands.Agent(
        model=model,
        tools=_strands_tools(calls),
        hooks=[StrandsApprovalGate()],
        session_manager=session,
        callback_handler=None,
    )
    return agent, model


_STREAM_ANNOTATIONS = ("metadata", "tracking_id")


def _without_stream_annotations(message: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in message.items() if key not in _STREAM_ANNOTATIONS}


def _strands_persisted(tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    [agent_dir] = (tmp_path / "session_parity" / "agents").iterdir()
    agent_record = json.loads((agent_dir / "agent.json").read_text())
    message_files = sorted((agent_dir / "messages").iterdir(), key=lambda path: int(path.stem.split("_")[1]))
    messages = [_without_stream_annotations(json.loads(path.read_text())["message"]) for path in message_files]
    interrupt_state = agent_record["_internal_state"]["interrupt_state"]
    pending = interrupt_state["pending_tool_execution"]
    pending["assistant_message"] = _without_stream_annotations(pending["assistant_message"])
    return interrupt_state, messages


def _our_agent(recorder: Recorder, store: SessionStore, session_id: str) -> Agent:
    """Signoff's twin of ``_strands_agent``: the same script, tools and gate, its state in ``store``."""
    return Agent(
        ScriptedModel(TURNS),
        recorder.tools(),
        hooks=[ApprovalGate(["restart_service"])],
        session_id=session_id,
        store=store,
    )


def test_stored_state_after_an_interrupt_equals_what_strands_persists(tmp_path: Path, store: SessionStore) -> None:
    strands_calls: list[str] = []
    strands_agent, _ = _strands_agent(tmp_path, strands_calls)
    strands_result = strands_agent("restart api")
    assert strands_result.stop_reason == "interrupt"

    recorder = Recorder()
    ours = _our_agent(recorder, store, "parity")
    our_result = ours("restart api")

    theirs_state, theirs_messages = _strands_persisted(tmp_path)
    stored = store.load("parity")
    assert stored is not None
    # Each runtime describes the tool's input by its own schema (the two tools are written apart): both carry one.
    for state in (stored.interrupt_state, theirs_state):
        for interrupt in state["interrupts"].values():
            assert interrupt["reason"].pop("inputSchema")["properties"]["service"]["type"] == "string"
    assert stored.interrupt_state == theirs_state
    assert stored.messages == theirs_messages
    assert [interrupt.id for interrupt in our_result.interrupts] == [i.id for i in strands_result.interrupts]
    assert recorder.names() == strands_calls == ["read_logs"]


def test_each_side_resumes_from_the_others_stored_interrupt_state(tmp_path: Path, store: SessionStore) -> None:
    strands_calls: list[str] = []
    strands_agent, strands_model = _strands_agent(tmp_path, strands_calls)
    [strands_interrupt] = strands_agent("restart api").interrupts

    recorder = Recorder()
    ours = _our_agent(recorder, store, "swap")
    [our_interrupt] = ours("restart api").interrupts

    # Swap interrupt states: each side continues from what the other serialized.
    ours_serialized = ours._interrupt_state.to_dict()
    ours._interrupt_state = _InterruptState.from_dict(strands_agent._interrupt_state.to_dict())
    strands_agent._interrupt_state = type(strands_agent._interrupt_state).from_dict(ours_serialized)

    approve = decision("approve")
    our_end = ours([respond(our_interrupt.id, approve)])
    strands_end = strands_agent([respond(strands_interrupt.id, approve)])

    assert our_end.stop_reason == strands_end.stop_reason == "end_turn"
    assert recorder.names() == strands_calls == ["read_logs", "restart_service"]  # read_logs not re-run
    assert strands_model.calls == 2
    assert ours._interrupt_state.to_dict() == strands_agent._interrupt_state.to_dict()


def test_responses_to_an_agent_not_interrupted_fail_with_strands_words(tmp_path: Path) -> None:
    responses = [{"interruptResponse": {"interruptId": "v1:before_tools:x", "response": True}}]
    theirs, _ = _strands_agent(tmp_path, [])
    ours = Agent(ScriptedModel(TURNS), [])
    with pytest.raises(ValueError, match="interrupt state") as their_error:
        theirs(responses)
    with pytest.raises(ValueError, match="interrupt state") as our_error:
        ours(responses)
    assert str(our_error.value) == str(their_error.value)
