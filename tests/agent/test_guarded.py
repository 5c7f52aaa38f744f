"""Which calls an interrupt guards: read from its id and the pending batch, never from its reason."""

import uuid
from urllib.parse import quote

from agent.guarded import guarded_calls, waiting_calls
from agent.ids import interrupt_id
from state.interrupt import Interrupt, PendingToolExecution, _InterruptState
from state.shapes import ToolUse

DELETE: ToolUse = {"toolUseId": "t1", "name": "delete_files", "input": {"paths": ["/tmp/a"]}}
INSPECT: ToolUse = {"toolUseId": "t1:x", "name": "inspect_files", "input": {"paths": ["/tmp/a"]}}
ODD: ToolUse = {"toolUseId": "tooluse/ä b", "name": "notify", "input": {}}
WAITING = [DELETE, INSPECT, ODD]


def test_a_per_call_interrupt_guards_the_call_its_id_names() -> None:
    assert guarded_calls(interrupt_id("before_tool_call", "ask", "t1"), WAITING) == [DELETE]
    assert guarded_calls(interrupt_id("tool_call", "ask", "t1:x"), WAITING) == [INSPECT]  # ':' in a toolUseId
    assert guarded_calls(interrupt_id("tool_call", "ask", "tooluse/ä b"), WAITING) == [ODD]


def test_scopes_strands_adds_are_read_the_same_way() -> None:
    name_hash = uuid.uuid5(uuid.NAMESPACE_OID, "ask")
    assert guarded_calls(f"v1:middleware_execute_tool:t1:{name_hash}", WAITING) == [DELETE]
    # Strands namespaces a sub-agent's interrupt under the quoted toolUseId of the agent-as-tool call.
    nested = f"v1:agent_as_tool:{quote('tooluse/ä b', safe='')}:v1:before_tool_call:s1:{name_hash}"
    assert guarded_calls(nested, WAITING) == [ODD]


def test_a_batch_interrupt_guards_every_waiting_call() -> None:
    assert guarded_calls(interrupt_id("before_tools", "batch"), WAITING) == WAITING


def test_an_interrupt_naming_no_waiting_call_guards_none() -> None:
    assert guarded_calls(interrupt_id("middleware_agent_stream", "run"), WAITING) == []
    assert guarded_calls(interrupt_id("before_tool_call", "ask", "t9"), WAITING) == []
    assert guarded_calls("custom-id", WAITING) == []
    assert guarded_calls("v2:tool_call:t1:abc", WAITING) == []


def test_waiting_calls_are_the_pending_batch_without_results() -> None:
    message = {"role": "assistant", "content": [{"text": "go"}, {"toolUse": DELETE}, {"toolUse": INSPECT}]}
    done = [{"toolUseId": "t1", "status": "success", "content": [{"text": "deleted"}]}]
    state = _InterruptState(
        interrupts={"i": Interrupt("i", "ask")},
        activated=True,
        pending_tool_execution=PendingToolExecution(message, done),  # type: ignore[arg-type]
    )
    assert waiting_calls(state) == [INSPECT]
    state.activated = False
    assert waiting_calls(state) == []
