"""Behaviour of ``state.validation``: what outside data is accepted, and how a refusal names its field."""

import copy
from collections.abc import Callable
from typing import Any

import pytest

from state import ShapeError
from state.interrupt import Interrupt, PendingToolExecution, _InterruptState
from state.validation import check_agent_state, check_interrupt_responses, check_interrupt_state, check_messages

Checker = Callable[..., Any]

INVOCATION_ID = "v1:middleware_agent_stream:approve-run"
TOOL_ID = "v1:tool_call:tooluse-1:delete_file"


def conversation() -> list[dict[str, Any]]:
    """A conversation using every block kind the project interprets, plus ones it only passes through."""
    return [
        {
            "role": "user",
            "content": [
                {"text": "Clean up /tmp/x, see the screenshot"},
                {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}},
                {"document": {"format": "pdf", "name": "policy", "source": {"bytes": "JVBERi0="}}},
            ],
            "metadata": {"slack": {"channel": "C123", "ts": "1700000000.000100"}},
        },
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "The user wants...", "signature": "sig"}}},
                {
                    "toolUse": {
                        "toolUseId": "tooluse-1",
                        "name": "delete_file",
                        "input": {"path": "/tmp/x"},
                        "reasoningSignature": "abc",
                    }
                },
                {"cachePoint": {"type": "default"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse-1",
                        "status": "success",
                        "content": [{"text": "deleted"}, {"json": {"bytes": 0}}],
                    }
                },
                {"futureBlockKind": {"anything": [1, 2]}},
            ],
            "futureMessageField": True,
        },
        {"role": "assistant", "content": []},
    ]


def interrupt_state_dict() -> dict[str, Any]:
    state = _InterruptState(
        interrupts={
            TOOL_ID: Interrupt(id=TOOL_ID, name="delete_file", reason={"path": "/tmp/x"}),
            INVOCATION_ID: Interrupt(id=INVOCATION_ID, name="approve-run"),
        },
        context={"unknown_context_key": {"kept": True}},
        activated=True,
        pending_tool_execution=PendingToolExecution(
            assistant_message=conversation()[1],  # type: ignore[arg-type]
            completed_tool_results=[{"toolUseId": "tooluse-0", "status": "error", "content": [{"text": "boom"}]}],
        ),
    )
    state.resume([{"interruptResponse": {"interruptId": INVOCATION_ID, "response": False}}])
    return state.to_dict()


def responses() -> list[dict[str, Any]]:
    return [
        {"interruptResponse": {"interruptId": TOOL_ID, "response": {"approved": True}}},
        {"interruptResponse": {"interruptId": INVOCATION_ID, "response": None}},
    ]


def with_change(make: Callable[[], Any], change: Callable[[Any], object]) -> Any:
    data = make()
    change(data)
    return data


# --- accepted data ------------------------------------------------------------------------------


def _legacy_interrupt_state() -> dict[str, Any]:
    return {
        "interrupts": {TOOL_ID: {"id": TOOL_ID, "name": "delete_file"}},  # reason and response may be absent
        "context": {"tool_use_message": conversation()[1], "tool_results": [], "responses": responses()},
        "activated": True,
    }


GOOD: list[tuple[Checker, Callable[[], Any]]] = [
    (check_messages, conversation),
    (check_messages, list),
    (check_agent_state, lambda: {"counter": 0, "flags": [False, None], "nested": {"deep": {"x": ""}}}),
    (check_agent_state, dict),
    (check_interrupt_state, interrupt_state_dict),
    (check_interrupt_state, lambda: _InterruptState().to_dict()),
    (check_interrupt_state, lambda: {**_InterruptState().to_dict(), "pending_tool_execution": None}),
    (check_interrupt_state, _legacy_interrupt_state),
    (check_interrupt_responses, responses),
    (check_interrupt_responses, list),
]


@pytest.mark.parametrize(
    ("check", "make"),
    GOOD,
    ids=[
        "messages",
        "no-messages",
        "agent-state",
        "empty-agent-state",
        "interrupt-state",
        "fresh-interrupt-state",
        "pending-none",
        "legacy-interrupt-state",
        "responses",
        "no-responses",
    ],
)
def test_good_data_is_returned_as_the_same_object_unchanged(check: Checker, make: Callable[[], Any]) -> None:
    data = make()
    original = copy.deepcopy(data)

    assert check(data) is data
    assert data == original


def test_pass_through_blocks_and_fields_are_kept() -> None:
    messages = check_messages(conversation())

    assert messages[0]["content"][1] == {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}}
    assert messages[0].get("metadata") == {"slack": {"channel": "C123", "ts": "1700000000.000100"}}
    assert "reasoningContent" in messages[1]["content"][0]
    assert messages[2]["content"][1] == {"futureBlockKind": {"anything": [1, 2]}}
    assert messages[2]["futureMessageField"] is True  # type: ignore[typeddict-item]


def test_unknown_context_keys_are_kept() -> None:
    record = check_interrupt_state(interrupt_state_dict())

    assert record["context"]["unknown_context_key"] == {"kept": True}


# --- refused data -------------------------------------------------------------------------------


def _set(path: list[Any], value: Any) -> Callable[[Any], object]:
    def change(data: Any) -> None:
        for step in path[:-1]:
            data = data[step]
        data[path[-1]] = value

    return change


def _delete(path: list[Any]) -> Callable[[Any], object]:
    def change(data: Any) -> None:
        for step in path[:-1]:
            data = data[step]
        del data[path[-1]]

    return change


PENDING_MESSAGE = ["pending_tool_execution", "assistant_message"]
BAD: dict[str, tuple[Checker, Any, str]] = {
    # messages
    "messages-not-a-list": (check_messages, {"role": "user", "content": []}, "messages"),
    "message-not-a-dict": (check_messages, ["hello"], "messages.0"),
    "unknown-role": (check_messages, with_change(conversation, _set([0, "role"], "system")), "messages.0.role"),
    "missing-content": (check_messages, with_change(conversation, _delete([3, "content"])), "messages.3.content"),
    "content-not-a-list": (check_messages, with_change(conversation, _set([3, "content"], "hi")), "messages.3.content"),
    "text-not-a-string": (
        check_messages,
        with_change(conversation, _set([0, "content", 0, "text"], 5)),
        "messages.0.content.0.text",
    ),
    "tool-use-without-input": (
        check_messages,
        with_change(conversation, _delete([1, "content", 1, "toolUse", "input"])),
        "messages.1.content.1.toolUse.input",
    ),
    "tool-use-id-int": (
        check_messages,
        with_change(conversation, _set([1, "content", 1, "toolUse", "toolUseId"], 1)),
        "messages.1.content.1.toolUse.toolUseId",
    ),
    "tool-result-status-pending": (
        check_messages,
        with_change(conversation, _set([2, "content", 0, "toolResult", "status"], "pending")),
        "messages.2.content.0.toolResult.status",
    ),
    "tool-result-content-not-a-list": (
        check_messages,
        with_change(conversation, _set([2, "content", 0, "toolResult", "content"], "deleted")),
        "messages.2.content.0.toolResult.content",
    ),
    "metadata-not-a-dict": (
        check_messages,
        with_change(conversation, _set([0, "metadata"], ["x"])),
        "messages.0.metadata",
    ),
    # agent state
    "agent-state-a-list": (check_agent_state, [["k", "v"]], "agent_state"),
    "agent-state-a-string": (check_agent_state, '{"k": "v"}', "agent_state"),
    "agent-state-int-key": (check_agent_state, {1: "v"}, "agent_state.1.[key]"),
    # interrupt state
    "interrupt-state-not-a-dict": (check_interrupt_state, [], "interrupt_state"),
    "activated-string": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["activated"], "true")),
        "interrupt_state.activated",
    ),
    "activated-int": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["activated"], 1)),
        "interrupt_state.activated",
    ),
    "activated-missing": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _delete(["activated"])),
        "interrupt_state.activated",
    ),
    "interrupts-missing": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _delete(["interrupts"])),
        "interrupt_state.interrupts",
    ),
    "context-not-a-dict": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["context"], [])),
        "interrupt_state.context",
    ),
    "unknown-top-level-key": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["future"], 1)),
        "interrupt_state.future",
    ),
    "interrupt-under-another-id": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["interrupts", TOOL_ID, "id"], INVOCATION_ID)),
        f"interrupt_state.interrupts.{TOOL_ID}.id",
    ),
    "interrupt-extra-key": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["interrupts", TOOL_ID, "raised_at"], 123)),
        f"interrupt_state.interrupts.{TOOL_ID}.raised_at",
    ),
    "interrupt-without-name": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _delete(["interrupts", TOOL_ID, "name"])),
        f"interrupt_state.interrupts.{TOOL_ID}.name",
    ),
    "interrupt-id-int": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["interrupts", TOOL_ID, "id"], 7)),
        f"interrupt_state.interrupts.{TOOL_ID}.id",
    ),
    "pending-message-role": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set([*PENDING_MESSAGE, "role"], "tool")),
        "interrupt_state.pending_tool_execution.assistant_message.role",
    ),
    "pending-tool-use-id-int": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set([*PENDING_MESSAGE, "content", 1, "toolUse", "toolUseId"], 1)),
        "interrupt_state.pending_tool_execution.assistant_message.content.1.toolUse.toolUseId",
    ),
    "pending-result-status": (
        check_interrupt_state,
        with_change(
            interrupt_state_dict, _set(["pending_tool_execution", "completed_tool_results", 0, "status"], "skipped")
        ),
        "interrupt_state.pending_tool_execution.completed_tool_results.0.status",
    ),
    "pending-extra-key": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["pending_tool_execution", "resumed"], True)),
        "interrupt_state.pending_tool_execution.resumed",
    ),
    "pending-missing-results": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _delete(["pending_tool_execution", "completed_tool_results"])),
        "interrupt_state.pending_tool_execution.completed_tool_results",
    ),
    "pending-not-a-dict": (
        check_interrupt_state,
        with_change(interrupt_state_dict, _set(["pending_tool_execution"], "pending")),
        "interrupt_state.pending_tool_execution",
    ),
    "legacy-context-message": (
        check_interrupt_state,
        with_change(_legacy_interrupt_state, _set(["context", "tool_use_message", "role"], "bot")),
        "interrupt_state.context.tool_use_message.role",
    ),
    "legacy-context-result-status": (
        check_interrupt_state,
        with_change(
            _legacy_interrupt_state,
            _set(["context", "tool_results"], [{"toolUseId": "t", "status": "ok", "content": []}]),
        ),
        "interrupt_state.context.tool_results.0.status",
    ),
    "context-responses-without-response": (
        check_interrupt_state,
        with_change(_legacy_interrupt_state, _delete(["context", "responses", 0, "interruptResponse", "response"])),
        "interrupt_state.context.responses.0.interruptResponse.response",
    ),
    # interrupt responses
    "responses-not-a-list": (check_interrupt_responses, responses()[0], ""),
    "response-id-int": (
        check_interrupt_responses,
        with_change(responses, _set([0, "interruptResponse", "interruptId"], 1)),
        "0.interruptResponse.interruptId",
    ),
    "response-missing": (
        check_interrupt_responses,
        with_change(responses, _delete([1, "interruptResponse", "response"])),
        "1.interruptResponse.response",
    ),
    "response-extra-key": (
        check_interrupt_responses,
        with_change(responses, _set([0, "interruptResponse", "approved"], True)),
        "0.interruptResponse.approved",
    ),
    "response-block-extra-kind": (
        check_interrupt_responses,
        with_change(responses, _set([1, "text"], "approve")),
        "1.text",
    ),
    "response-plain-text-block": (check_interrupt_responses, [{"text": "approve"}], "0.interruptResponse"),
}


@pytest.mark.parametrize(("check", "data", "field"), BAD.values(), ids=BAD.keys())
def test_bad_shapes_are_refused_naming_the_field(check: Checker, data: Any, field: str) -> None:
    with pytest.raises(ShapeError) as caught:
        check(data)

    assert caught.value.field == field
    assert caught.value.problem
    assert str(caught.value) == f"field=<{field}> | {caught.value.problem}"


def test_shape_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^field=<agent_state> \| "):
        check_agent_state(None)


@pytest.mark.parametrize(
    ("check", "data", "prefix", "field"),
    [
        (check_messages, [{"role": "robot", "content": []}], "session.messages", "session.messages.0.role"),
        (check_agent_state, [], "session.agent_state", "session.agent_state"),
        (check_interrupt_state, {"interrupts": {}, "context": {}, "activated": "no"}, "s", "s.activated"),
        (check_interrupt_responses, [{}], "resume.prompt", "resume.prompt.0.interruptResponse"),
    ],
    ids=["messages", "agent-state", "interrupt-state", "responses"],
)
def test_prefix_replaces_the_default_root(check: Checker, data: Any, prefix: str, field: str) -> None:
    with pytest.raises(ShapeError) as caught:
        check(data, prefix=prefix)

    assert caught.value.field == field


def test_interrupt_id_check_uses_the_prefix() -> None:
    data = {"interrupts": {"a": {"id": "b", "name": "n"}}, "context": {}, "activated": True}

    with pytest.raises(ShapeError) as caught:
        check_interrupt_state(data, prefix="stored")

    assert caught.value.field == "stored.interrupts.a.id"
    assert "'b'" in caught.value.problem
