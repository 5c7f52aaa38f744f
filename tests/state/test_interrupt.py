"""Behaviour of ``state.interrupt``: the interrupt records, their lifetimes and their dict format."""

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from state import SessionException
from state.interrupt import Interrupt, InterruptException, PendingToolExecution, _InterruptState
from state.shapes import Message, ToolResult

INVOCATION_ID = "v1:middleware_agent_stream:approve-run"
OTHER_INVOCATION_ID = "v1:middleware_agent_stream:approve-spend"
TOOL_ID = "v1:tool_call:tooluse-1:delete_file"
OTHER_TOOL_ID = "v1:tool_call:tooluse-2:send_mail"

ANSWERS = [False, 0, "", [], {}, "approve", True, {"approved": True, "note": "ok"}]
"""Every value but ``None`` is an answer, falsy ones included."""


def assistant_message() -> Message:
    return {
        "role": "assistant",
        "content": [
            {"text": "Deleting the file, then mailing the team."},
            {"toolUse": {"toolUseId": "tooluse-1", "name": "delete_file", "input": {"path": "/tmp/x"}}},
            {"toolUse": {"toolUseId": "tooluse-2", "name": "send_mail", "input": {"to": ["team@example.com"]}}},
        ],
    }


def tool_result(tool_use_id: str = "tooluse-1", text: str = "deleted") -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}


def pending() -> PendingToolExecution:
    return PendingToolExecution(assistant_message=assistant_message(), completed_tool_results=[tool_result()])


def answer(interrupt_id: str, response: Any) -> dict[str, Any]:
    return {"interruptResponse": {"interruptId": interrupt_id, "response": response}}


def interrupted_state() -> _InterruptState:
    """An activated state with one unanswered interrupt of each scope and a pending tool batch."""
    return _InterruptState(
        interrupts={
            TOOL_ID: Interrupt(id=TOOL_ID, name="delete_file", reason={"path": "/tmp/x"}),
            INVOCATION_ID: Interrupt(id=INVOCATION_ID, name="approve-run", reason="runs tools"),
        },
        context={"note": "kept"},
        activated=True,
        pending_tool_execution=pending(),
    )


# --- Interrupt, InterruptException, PendingToolExecution ---------------------------------------


def test_interrupt_defaults_to_no_reason_and_no_response() -> None:
    interrupt = Interrupt(id=TOOL_ID, name="delete_file")

    assert interrupt.reason is None
    assert interrupt.response is None


def test_interrupt_to_dict_has_exactly_the_four_fields() -> None:
    interrupt = Interrupt(id=TOOL_ID, name="delete_file", reason={"path": "/tmp/x"}, response=False)

    assert interrupt.to_dict() == {
        "id": TOOL_ID,
        "name": "delete_file",
        "reason": {"path": "/tmp/x"},
        "response": False,
    }


def test_interrupt_to_dict_is_a_deep_copy() -> None:
    interrupt = Interrupt(id=TOOL_ID, name="n", reason={"paths": ["/a"]}, response={"notes": ["ok"]})

    data = interrupt.to_dict()
    data["reason"]["paths"].append("/b")
    data["response"]["notes"].append("changed")
    data["name"] = "other"

    assert interrupt == Interrupt(id=TOOL_ID, name="n", reason={"paths": ["/a"]}, response={"notes": ["ok"]})


def test_interrupt_exception_keeps_the_interrupt() -> None:
    interrupt = Interrupt(id=TOOL_ID, name="delete_file", reason="dangerous")

    with pytest.raises(InterruptException) as caught:
        raise InterruptException(interrupt)

    assert caught.value.interrupt is interrupt
    assert isinstance(caught.value, Exception)


def test_pending_tool_execution_to_dict_has_both_fields_deep_copied() -> None:
    execution = pending()

    data = execution.to_dict()
    assert data == {"assistant_message": assistant_message(), "completed_tool_results": [tool_result()]}

    data["assistant_message"]["content"].clear()
    data["completed_tool_results"][0]["content"].append({"text": "forged"})
    assert execution == pending()


# --- _get_version -------------------------------------------------------------------------------


def _resume(state: _InterruptState) -> None:
    state.resume([answer(TOOL_ID, "yes")])


def _set_results(state: _InterruptState) -> None:
    state.set_pending_tool_results([tool_result(), tool_result("tooluse-2", "sent")])


MUTATIONS: dict[str, Callable[[_InterruptState], None]] = {
    "activate": _InterruptState.activate,
    "deactivate": _InterruptState.deactivate,
    "resume": _resume,
    "set_pending_tool_results": _set_results,
    "end_tool_cycle": _InterruptState.end_tool_cycle,
    "end_interrupt_cycle": _InterruptState.end_interrupt_cycle,
}


def test_version_of_a_new_state_is_zero() -> None:
    assert _InterruptState()._get_version() == 0
    assert interrupted_state()._get_version() == 0


@pytest.mark.parametrize("mutation", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_every_mutation_bumps_the_version_by_one(mutation: Callable[[_InterruptState], None]) -> None:
    state = interrupted_state()  # activated, one interrupt of each scope, a pending batch
    before = state._get_version()

    mutation(state)

    assert state._get_version() == before + 1


def test_versions_accumulate_over_a_whole_cycle() -> None:
    state = _InterruptState()
    state.activate()
    state.interrupts[TOOL_ID] = Interrupt(id=TOOL_ID, name="delete_file")
    state.resume([answer(TOOL_ID, True)])
    state.end_tool_cycle()

    assert state._get_version() == 3


def test_set_pending_tool_results_without_pending_execution_changes_nothing() -> None:
    state = _InterruptState(activated=True)

    state.set_pending_tool_results([tool_result()])

    assert state.pending_tool_execution is None
    assert state._get_version() == 0


def test_set_pending_tool_results_replaces_the_completed_results() -> None:
    state = interrupted_state()
    results = [tool_result(), tool_result("tooluse-2", "sent")]

    state.set_pending_tool_results(results)

    assert state.pending_tool_execution is not None
    assert state.pending_tool_execution.completed_tool_results == results
    assert state.pending_tool_execution.assistant_message == assistant_message()


@pytest.mark.parametrize(
    "interrupts",
    [
        {},
        {TOOL_ID: Interrupt(id=TOOL_ID, name="t", response="yes")},
        {TOOL_ID: Interrupt(id=TOOL_ID, name="t"), OTHER_TOOL_ID: Interrupt(id=OTHER_TOOL_ID, name="u")},
    ],
    ids=["none", "answered-tool-scoped", "two-tool-scoped"],
)
def test_end_interrupt_cycle_without_invocation_scoped_interrupts_is_no_mutation(
    interrupts: dict[str, Interrupt],
) -> None:
    state = _InterruptState(interrupts=dict(interrupts), activated=True)

    state.end_interrupt_cycle()

    assert state._get_version() == 0
    assert state.interrupts == interrupts


# --- deactivate, end_tool_cycle, end_interrupt_cycle --------------------------------------------


def test_deactivate_forgets_interrupts_context_and_pending_execution() -> None:
    state = interrupted_state()
    state.resume([answer(INVOCATION_ID, "approve")])

    state.deactivate()

    assert state == _InterruptState()
    assert state.interrupts == {}
    assert state.context == {}
    assert state.activated is False
    assert state.pending_tool_execution is None


@pytest.mark.parametrize("response", ANSWERS, ids=repr)
def test_end_tool_cycle_keeps_answered_invocation_scoped_interrupts(response: Any) -> None:
    state = interrupted_state()
    state.resume([answer(INVOCATION_ID, response), answer(TOOL_ID, "yes")])

    state.end_tool_cycle()

    assert state.interrupts == {
        INVOCATION_ID: Interrupt(id=INVOCATION_ID, name="approve-run", reason="runs tools", response=response)
    }
    assert state.activated is False
    assert state.context == {}
    assert state.pending_tool_execution is None


def test_end_tool_cycle_drops_unanswered_invocation_scoped_and_every_tool_scoped_interrupt() -> None:
    state = _InterruptState(
        interrupts={
            INVOCATION_ID: Interrupt(id=INVOCATION_ID, name="a"),
            OTHER_INVOCATION_ID: Interrupt(id=OTHER_INVOCATION_ID, name="b", response=None),
            TOOL_ID: Interrupt(id=TOOL_ID, name="c", response="answered"),
            OTHER_TOOL_ID: Interrupt(id=OTHER_TOOL_ID, name="d"),
        },
        context={"responses": []},
        activated=True,
        pending_tool_execution=pending(),
    )

    state.end_tool_cycle()

    assert state == _InterruptState()


def test_end_tool_cycle_requires_the_exact_prefix() -> None:
    look_alikes = ["v1:middleware_agent_stream", "v2:middleware_agent_stream:x", "x:v1:middleware_agent_stream:y"]
    state = _InterruptState(
        interrupts={interrupt_id: Interrupt(id=interrupt_id, name="n", response="yes") for interrupt_id in look_alikes},
        activated=True,
    )

    state.end_tool_cycle()

    assert state.interrupts == {}


def test_end_interrupt_cycle_drops_every_invocation_scoped_interrupt_and_keeps_the_rest() -> None:
    tool_scoped = {
        TOOL_ID: Interrupt(id=TOOL_ID, name="c", response="answered"),
        OTHER_TOOL_ID: Interrupt(id=OTHER_TOOL_ID, name="d"),
    }
    state = _InterruptState(
        interrupts={
            INVOCATION_ID: Interrupt(id=INVOCATION_ID, name="a", response=False),
            OTHER_INVOCATION_ID: Interrupt(id=OTHER_INVOCATION_ID, name="b"),
            **tool_scoped,
        },
        context={"responses": []},
        activated=True,
        pending_tool_execution=pending(),
    )

    state.end_interrupt_cycle()

    assert state.interrupts == tool_scoped
    # Only the interrupts change: the rest of the interrupt state is not this method's business.
    assert state.activated is True
    assert state.context == {"responses": []}
    assert state.pending_tool_execution == pending()


# --- resume -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prompt",
    ["approve", None, 42, [{"text": "hi"}], [answer("unknown", "yes")], [answer(TOOL_ID, "yes")]],
    ids=repr,
)
def test_resume_when_not_activated_changes_nothing(prompt: Any) -> None:
    state = _InterruptState(interrupts={TOOL_ID: Interrupt(id=TOOL_ID, name="t")}, context={"a": 1})

    state.resume(prompt)

    assert state._get_version() == 0
    assert state == _InterruptState(interrupts={TOOL_ID: Interrupt(id=TOOL_ID, name="t")}, context={"a": 1})


@pytest.mark.parametrize(
    "prompt",
    ["approve", None, 7, answer(TOOL_ID, "yes"), (answer(TOOL_ID, "yes"),)],
    ids=["str", "None", "int", "bare-block", "tuple"],
)
def test_resume_refuses_a_prompt_that_is_not_a_list(prompt: Any) -> None:
    state = interrupted_state()

    with pytest.raises(TypeError, match="prompt_type=") as caught:
        state.resume(prompt)

    assert "interruptResponse" in str(caught.value)
    assert state == interrupted_state()
    assert state._get_version() == 0


@pytest.mark.parametrize(
    ("prompt", "named_type"),
    [
        ([{"text": "approve"}], "text"),
        ([answer(TOOL_ID, "yes"), {"image": {}}], "image"),
        ([{**answer(TOOL_ID, "yes"), "toolResult": {}}], "toolResult"),
    ],
    ids=["text-only", "second-block", "extra-key-in-block"],
)
def test_resume_refuses_other_content_blocks_before_recording_anything(prompt: Any, named_type: str) -> None:
    state = interrupted_state()

    with pytest.raises(TypeError, match="content_types=") as caught:
        state.resume(prompt)

    assert named_type in str(caught.value)
    assert state.interrupts[TOOL_ID].response is None
    assert "responses" not in state.context
    assert state._get_version() == 0


def test_resume_refuses_an_unknown_interrupt_id() -> None:
    state = interrupted_state()

    with pytest.raises(KeyError) as caught:
        state.resume([answer("v1:tool_call:forged", "yes")])

    assert caught.value.args == ("interrupt_id=<v1:tool_call:forged> | no interrupt found",)
    assert "responses" not in state.context
    assert state._get_version() == 0


@pytest.mark.parametrize("response", ANSWERS, ids=repr)
def test_resume_records_the_response_falsy_ones_included(response: Any) -> None:
    state = interrupted_state()
    prompt = [answer(TOOL_ID, response)]

    state.resume(prompt)

    assert state.interrupts[TOOL_ID].response == response
    assert type(state.interrupts[TOOL_ID].response) is type(response)
    assert state.interrupts[INVOCATION_ID].response is None
    assert state.context["responses"] == prompt
    assert state.context["note"] == "kept"
    assert state.activated is True
    assert state._get_version() == 1


def test_resume_records_several_responses_in_one_prompt() -> None:
    state = interrupted_state()
    prompt = [answer(TOOL_ID, "deny"), answer(INVOCATION_ID, {"approved": True})]

    state.resume(prompt)

    assert state.interrupts[TOOL_ID].response == "deny"
    assert state.interrupts[INVOCATION_ID].response == {"approved": True}
    assert state.context["responses"] == prompt


def test_resume_with_an_empty_list_is_accepted() -> None:
    state = interrupted_state()

    state.resume([])

    assert state._get_version() == 1
    assert state.context["responses"] == []
    assert all(interrupt.response is None for interrupt in state.interrupts.values())


# --- to_dict ------------------------------------------------------------------------------------


def test_to_dict_of_a_fresh_state() -> None:
    assert _InterruptState().to_dict() == {"interrupts": {}, "context": {}, "activated": False}


def test_to_dict_has_pending_tool_execution_only_when_set() -> None:
    with_pending = interrupted_state().to_dict()
    without_pending = _InterruptState(activated=True).to_dict()

    assert set(with_pending) == {"interrupts", "context", "activated", "pending_tool_execution"}
    assert with_pending["pending_tool_execution"] == pending().to_dict()
    assert set(without_pending) == {"interrupts", "context", "activated"}


def test_to_dict_while_activated_includes_every_interrupt() -> None:
    state = interrupted_state()
    state.resume([answer(INVOCATION_ID, False)])

    data = state.to_dict()

    assert data["activated"] is True
    assert data["interrupts"] == {
        TOOL_ID: {"id": TOOL_ID, "name": "delete_file", "reason": {"path": "/tmp/x"}, "response": None},
        INVOCATION_ID: {"id": INVOCATION_ID, "name": "approve-run", "reason": "runs tools", "response": False},
    }
    assert data["context"] == {"note": "kept", "responses": [answer(INVOCATION_ID, False)]}


def test_to_dict_while_deactivated_omits_invocation_scoped_interrupts() -> None:
    # The real path: an answered invocation-scoped interrupt survives the tool cycle in memory ...
    state = interrupted_state()
    state.resume([answer(INVOCATION_ID, "approve"), answer(TOOL_ID, "yes")])
    state.end_tool_cycle()
    assert INVOCATION_ID in state.interrupts

    # ... but is never persisted while deactivated: a saved answer must not become a standing approval.
    assert state.to_dict() == {"interrupts": {}, "context": {}, "activated": False}


def test_to_dict_while_deactivated_keeps_tool_scoped_interrupts() -> None:
    state = _InterruptState(
        interrupts={
            TOOL_ID: Interrupt(id=TOOL_ID, name="t", response="yes"),
            INVOCATION_ID: Interrupt(id=INVOCATION_ID, name="i", response="yes"),
        }
    )

    assert state.to_dict()["interrupts"] == {TOOL_ID: {"id": TOOL_ID, "name": "t", "reason": None, "response": "yes"}}


def test_to_dict_pending_block_and_interrupts_are_deep_copies() -> None:
    state = interrupted_state()

    data = state.to_dict()
    data["pending_tool_execution"]["assistant_message"]["content"].append({"text": "forged"})
    data["pending_tool_execution"]["completed_tool_results"].clear()
    data["interrupts"][TOOL_ID]["reason"]["path"] = "/etc/passwd"

    assert state.pending_tool_execution == pending()
    assert state.interrupts[TOOL_ID].reason == {"path": "/tmp/x"}


def test_to_dict_is_json_serializable() -> None:
    state = interrupted_state()
    state.resume([answer(TOOL_ID, {"approved": True})])

    assert json.loads(json.dumps(state.to_dict())) == state.to_dict()


# --- from_dict ----------------------------------------------------------------------------------


def legacy_dict() -> dict[str, Any]:
    return {
        "interrupts": {TOOL_ID: {"id": TOOL_ID, "name": "delete_file", "reason": None, "response": None}},
        "context": {"tool_use_message": assistant_message(), "tool_results": [tool_result()], "other": 1},
        "activated": True,
    }


FROM_DICT_INPUTS: dict[str, Callable[[], dict[str, Any]]] = {
    "typed": lambda: interrupted_state().to_dict(),
    "legacy": legacy_dict,
    "typed-and-legacy": lambda: {**legacy_dict(), "pending_tool_execution": pending().to_dict()},
    "deactivated-with-invocation-scoped": lambda: {
        "interrupts": {INVOCATION_ID: {"id": INVOCATION_ID, "name": "i", "reason": None, "response": "yes"}},
        "context": {"responses": [answer(INVOCATION_ID, "yes")]},
        "activated": False,
    },
}


@pytest.mark.parametrize("make", FROM_DICT_INPUTS.values(), ids=FROM_DICT_INPUTS.keys())
def test_from_dict_does_not_mutate_its_input(make: Callable[[], dict[str, Any]]) -> None:
    data = make()
    original = copy.deepcopy(data)

    state = _InterruptState.from_dict(data)
    assert data == original

    # Nor do later mutations of the restored state reach back into the input.
    state.resume([answer(TOOL_ID, "yes")] if TOOL_ID in state.interrupts else [])
    state.set_pending_tool_results([tool_result("tooluse-2", "sent")])
    state.end_interrupt_cycle()
    state.end_tool_cycle()
    assert data == original


def test_from_dict_restores_a_fresh_version() -> None:
    assert _InterruptState.from_dict(interrupted_state().to_dict())._get_version() == 0


def test_from_dict_migrates_the_legacy_pending_context() -> None:
    state = _InterruptState.from_dict(legacy_dict())

    assert state.pending_tool_execution == PendingToolExecution(
        assistant_message=assistant_message(), completed_tool_results=[tool_result()]
    )
    assert state.context == {"other": 1}
    assert state.activated is True
    assert state.interrupts == {TOOL_ID: Interrupt(id=TOOL_ID, name="delete_file")}


def test_from_dict_legacy_message_without_results_gets_no_completed_results() -> None:
    data = legacy_dict()
    del data["context"]["tool_results"]

    state = _InterruptState.from_dict(data)

    assert state.pending_tool_execution == PendingToolExecution(
        assistant_message=assistant_message(), completed_tool_results=[]
    )
    assert state.context == {"other": 1}


def test_from_dict_legacy_results_without_message_stay_in_context() -> None:
    data = legacy_dict()
    del data["context"]["tool_use_message"]

    state = _InterruptState.from_dict(data)

    assert state.pending_tool_execution is None
    assert state.context == {"tool_results": [tool_result()], "other": 1}


def test_from_dict_typed_pending_block_wins_over_legacy_context() -> None:
    typed = PendingToolExecution(
        assistant_message={"role": "assistant", "content": [{"text": "typed"}]},
        completed_tool_results=[tool_result("typed-1", "typed")],
    )
    data = {**legacy_dict(), "pending_tool_execution": typed.to_dict()}

    state = _InterruptState.from_dict(data)

    assert state.pending_tool_execution == typed
    assert state.context == {"other": 1}


def test_from_dict_explicit_none_pending_block_means_none() -> None:
    data = {"interrupts": {}, "context": {}, "activated": True, "pending_tool_execution": None}

    assert _InterruptState.from_dict(data).pending_tool_execution is None


@pytest.mark.parametrize(
    "pending_block",
    [
        {"assistant_message": assistant_message()},
        {"completed_tool_results": []},
        {"assistant_message": assistant_message(), "completed_tool_results": [], "extra": 1},
        "not a mapping",
        [assistant_message(), []],
        42,
    ],
    ids=["missing-results", "missing-message", "extra-key", "str", "list", "int"],
)
def test_from_dict_refuses_a_malformed_pending_block(pending_block: Any) -> None:
    data = {"interrupts": {}, "context": {}, "activated": True, "pending_tool_execution": pending_block}

    with pytest.raises(SessionException) as caught:
        _InterruptState.from_dict(data)

    assert isinstance(caught.value.__cause__, TypeError)


def test_from_dict_while_deactivated_drops_invocation_scoped_interrupts() -> None:
    data = {
        "interrupts": {
            INVOCATION_ID: {"id": INVOCATION_ID, "name": "i", "reason": None, "response": "approve"},
            TOOL_ID: {"id": TOOL_ID, "name": "t", "reason": None, "response": "yes"},
        },
        "context": {},
        "activated": False,
    }

    state = _InterruptState.from_dict(data)

    assert state.interrupts == {TOOL_ID: Interrupt(id=TOOL_ID, name="t", response="yes")}


def test_from_dict_while_activated_keeps_invocation_scoped_interrupts() -> None:
    data = {
        "interrupts": {
            INVOCATION_ID: {"id": INVOCATION_ID, "name": "i", "reason": "r", "response": False},
            TOOL_ID: {"id": TOOL_ID, "name": "t", "reason": None, "response": None},
        },
        "context": {},
        "activated": True,
    }

    state = _InterruptState.from_dict(data)

    assert state.interrupts == {
        INVOCATION_ID: Interrupt(id=INVOCATION_ID, name="i", reason="r", response=False),
        TOOL_ID: Interrupt(id=TOOL_ID, name="t"),
    }


def _answered_state() -> _InterruptState:
    state = interrupted_state()
    state.resume([answer(TOOL_ID, 0), answer(INVOCATION_ID, "")])
    return state


def _deactivated_tool_scoped_state() -> _InterruptState:
    return _InterruptState(interrupts={TOOL_ID: Interrupt(id=TOOL_ID, name="t", reason=[1, 2], response=False)})


ROUND_TRIP_STATES: dict[str, Callable[[], _InterruptState]] = {
    "fresh": _InterruptState,
    "interrupted": interrupted_state,
    "answered": _answered_state,
    "deactivated-tool-scoped": _deactivated_tool_scoped_state,
}


@pytest.mark.parametrize("make", ROUND_TRIP_STATES.values(), ids=ROUND_TRIP_STATES.keys())
def test_round_trip_through_dict_and_json(make: Callable[[], _InterruptState]) -> None:
    state = make()

    restored = _InterruptState.from_dict(json.loads(json.dumps(state.to_dict())))

    assert restored == state
    assert restored.to_dict() == state.to_dict()


def test_round_trip_after_a_tool_cycle_loses_the_standing_approval() -> None:
    state = _answered_state()
    state.end_tool_cycle()

    restored = _InterruptState.from_dict(state.to_dict())

    assert INVOCATION_ID in state.interrupts
    assert restored == _InterruptState()
