"""``state.interrupt`` and Strands Agents 1.62's ``strands.interrupt``, side by side on hand-picked cases.

Each test runs the same operations on both implementations: parametrized tests check both against one
expected value, ``same_on_both`` compares the two results directly. The persisted form is compared as
JSON text, so key order counts too. ``test_strands_compat.py`` draws random states for the same
contract; this file names the cases one by one, errors and their messages included.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
import strands.interrupt
from strands.types.exceptions import SessionException as StrandsSessionException

import state.interrupt
from state import SessionException

AGENT_STREAM_ID = "v1:middleware_agent_stream:approve-run"
OTHER_AGENT_STREAM_ID = "v1:middleware_agent_stream:approve-spend"
TOOL_ID = "v1:tool_call:tooluse-1:delete_file"
OTHER_TOOL_ID = "v1:before_tools:send_mail"


@dataclass(frozen=True)
class Implementation:
    """One implementation of the interrupt contract, with constructors that spell its names once."""

    name: str
    module: Any

    def interrupt(self, interrupt_id: str, name: str, reason: Any = None, response: Any = None) -> Any:
        return self.module.Interrupt(id=interrupt_id, name=name, reason=reason, response=response)

    def pending(self, message: dict[str, Any], results: list[dict[str, Any]]) -> Any:
        return self.module.PendingToolExecution(assistant_message=message, completed_tool_results=results)

    def state(self, *interrupts: Any, **fields: Any) -> Any:
        return self.module._InterruptState(interrupts={i.id: i for i in interrupts}, **fields)

    def load(self, data: dict[str, Any]) -> Any:
        return self.module._InterruptState.from_dict(data)


SIGNOFF = Implementation("signoff", state.interrupt)
STRANDS = Implementation("strands", strands.interrupt)

T = TypeVar("T")


@pytest.fixture(params=[SIGNOFF, STRANDS], ids=lambda implementation: implementation.name)
def impl(request: pytest.FixtureRequest) -> Implementation:
    implementation: Implementation = request.param
    return implementation


def same_on_both(scenario: Callable[[Implementation], T]) -> T:
    """Run ``scenario`` on each implementation; both must return equal values. Returns the value."""
    ours, theirs = scenario(SIGNOFF), scenario(STRANDS)
    assert ours == theirs
    return ours


def failure_on_both(scenario: Callable[[Implementation], object]) -> tuple[BaseException, BaseException]:
    """Run ``scenario`` on each implementation; both must raise. Returns Signoff's and Strands' exception."""
    raised = []
    for implementation in (SIGNOFF, STRANDS):
        with pytest.raises(Exception) as caught:  # noqa: PT011 - the caller compares the two exceptions
            scenario(implementation)
        raised.append(caught.value)
    return raised[0], raised[1]


def persisted(interrupt_state: Any) -> str:
    """The text a session store would hold for ``interrupt_state``."""
    return json.dumps(interrupt_state.to_dict())


def message(text: str = "Deleting the file.") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"text": text},
            {"toolUse": {"toolUseId": "tooluse-1", "name": "delete_file", "input": {"path": "/tmp/x"}}},
        ],
    }


def result(tool_use_id: str = "tooluse-1", status: str = "success") -> dict[str, Any]:
    return {"toolUseId": tool_use_id, "status": status, "content": [{"text": "done"}]}


def answer(interrupt_id: str, response: Any) -> dict[str, Any]:
    return {"interruptResponse": {"interruptId": interrupt_id, "response": response}}


def interrupted(impl: Implementation) -> Any:
    """Activated, one unanswered interrupt of each lifetime, a pending tool batch, some context."""
    return impl.state(
        impl.interrupt(TOOL_ID, "delete_file", reason={"path": "/tmp/x"}),
        impl.interrupt(AGENT_STREAM_ID, "approve-run", reason="runs tools"),
        context={"note": "kept"},
        activated=True,
        pending_tool_execution=impl.pending(message(), [result("tooluse-0")]),
    )


# --- the agent-stream prefix and Interrupt -------------------------------------------------------


def test_agent_stream_prefix_is_the_same(impl: Implementation) -> None:
    assert impl.module._AGENT_STREAM_INTERRUPT_ID_PREFIX == "v1:middleware_agent_stream:"


@pytest.mark.parametrize("response", [None, False, 0, "", {"approved": True, "note": "ok"}], ids=repr)
def test_interrupt_to_dict_holds_its_four_fields(impl: Implementation, response: Any) -> None:
    interrupt = impl.interrupt(TOOL_ID, "delete_file", reason={"path": "/tmp/x"}, response=response)

    assert interrupt.to_dict() == {
        "id": TOOL_ID,
        "name": "delete_file",
        "reason": {"path": "/tmp/x"},
        "response": response,
    }
    assert type(interrupt.to_dict()["response"]) is type(response)


def test_interrupt_round_trips_through_its_dict(impl: Implementation) -> None:
    interrupt = impl.interrupt(TOOL_ID, "delete_file", reason=["a", {"b": 1}], response={"approved": False})

    assert impl.module.Interrupt(**json.loads(json.dumps(interrupt.to_dict()))) == interrupt


def test_interrupt_to_dict_is_a_deep_copy(impl: Implementation) -> None:
    interrupt = impl.interrupt(TOOL_ID, "delete_file", reason={"paths": ["/a"]}, response={"notes": ["ok"]})

    data = interrupt.to_dict()
    data["reason"]["paths"].append("/b")
    data["response"]["notes"].clear()

    assert interrupt.reason == {"paths": ["/a"]}
    assert interrupt.response == {"notes": ["ok"]}


# --- version ------------------------------------------------------------------------------------

MUTATIONS: dict[str, Callable[[Any], None]] = {
    "activate": lambda interrupt_state: interrupt_state.activate(),
    "deactivate": lambda interrupt_state: interrupt_state.deactivate(),
    "resume": lambda interrupt_state: interrupt_state.resume([answer(TOOL_ID, "yes")]),
    "set_pending_tool_results": lambda interrupt_state: interrupt_state.set_pending_tool_results([result()]),
    "end_tool_cycle": lambda interrupt_state: interrupt_state.end_tool_cycle(),
    "end_interrupt_cycle": lambda interrupt_state: interrupt_state.end_interrupt_cycle(),
}


def test_a_new_state_is_at_version_zero(impl: Implementation) -> None:
    assert impl.state()._get_version() == 0
    assert interrupted(impl)._get_version() == 0
    assert impl.load(interrupted(impl).to_dict())._get_version() == 0


@pytest.mark.parametrize("mutation", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_each_mutation_gives_the_same_state_and_version(mutation: Callable[[Any], None]) -> None:
    def mutated(impl: Implementation) -> tuple[str, int]:
        interrupt_state = interrupted(impl)
        mutation(interrupt_state)
        return persisted(interrupt_state), interrupt_state._get_version()

    assert same_on_both(mutated)[1] == 1


def test_versions_add_up_over_activate_then_deactivate(impl: Implementation) -> None:
    interrupt_state = impl.state()

    interrupt_state.activate()
    assert interrupt_state._get_version() == 1
    interrupt_state.deactivate()
    assert interrupt_state._get_version() == 2


def test_the_version_is_not_serialized(impl: Implementation) -> None:
    interrupt_state = impl.state()
    interrupt_state.activate()

    assert set(interrupt_state.to_dict()) == {"interrupts", "context", "activated"}


# --- activate, deactivate, set_pending_tool_results ---------------------------------------------


def test_activate_sets_activated(impl: Implementation) -> None:
    interrupt_state = impl.state()

    interrupt_state.activate()

    assert interrupt_state.activated is True


def test_deactivate_forgets_interrupts_context_and_pending_execution(impl: Implementation) -> None:
    interrupt_state = interrupted(impl)

    interrupt_state.deactivate()

    assert interrupt_state == impl.state()
    assert interrupt_state.pending_tool_execution is None


def test_set_pending_tool_results_replaces_only_the_results(impl: Implementation) -> None:
    interrupt_state = interrupted(impl)

    interrupt_state.set_pending_tool_results([result(), result("tooluse-2", "error")])

    assert interrupt_state.pending_tool_execution == impl.pending(message(), [result(), result("tooluse-2", "error")])


def test_set_pending_tool_results_without_a_pending_execution_is_no_mutation(impl: Implementation) -> None:
    interrupt_state = impl.state(activated=True)

    interrupt_state.set_pending_tool_results([result()])

    assert interrupt_state.pending_tool_execution is None
    assert interrupt_state._get_version() == 0


# --- resume -------------------------------------------------------------------------------------


def test_resume_records_each_response_and_the_prompt(impl: Implementation) -> None:
    interrupt_state = interrupted(impl)
    prompt = [answer(TOOL_ID, "deny"), answer(AGENT_STREAM_ID, False)]

    interrupt_state.resume(prompt)

    assert interrupt_state.interrupts[TOOL_ID].response == "deny"
    assert interrupt_state.interrupts[AGENT_STREAM_ID].response is False
    assert interrupt_state.context == {"note": "kept", "responses": prompt}
    assert interrupt_state.activated is True


@pytest.mark.parametrize("prompt", [[], "approve", [{"text": "hi"}], [answer("unknown", "yes")]], ids=repr)
def test_resume_while_deactivated_is_ignored(impl: Implementation, prompt: Any) -> None:
    interrupt_state = impl.state(impl.interrupt(TOOL_ID, "delete_file"), context={"a": 1})

    interrupt_state.resume(prompt)

    assert interrupt_state == impl.state(impl.interrupt(TOOL_ID, "delete_file"), context={"a": 1})
    assert interrupt_state._get_version() == 0


REFUSED_PROMPTS: dict[str, tuple[Any, type[Exception], str]] = {
    "text-prompt": (
        "approve",
        TypeError,
        "prompt_type=<class 'str'> | must resume from interrupt with list of interruptResponse's",
    ),
    "bare-block": (
        answer(TOOL_ID, "yes"),
        TypeError,
        "prompt_type=<class 'dict'> | must resume from interrupt with list of interruptResponse's",
    ),
    "text-block": (
        [{"text": "approve"}],
        TypeError,
        "content_types=<['text']> | must resume from interrupt with list of interruptResponse's",
    ),
    "answer-then-image": (
        [answer(TOOL_ID, "yes"), {"image": {}}, {"text": "x"}],
        TypeError,
        "content_types=<['image', 'text']> | must resume from interrupt with list of interruptResponse's",
    ),
    "unknown-id": (
        [answer("v1:tool_call:forged", "yes")],
        KeyError,
        "interrupt_id=<v1:tool_call:forged> | no interrupt found",
    ),
    "unknown-id-after-a-known-one": (
        [answer(TOOL_ID, "yes"), answer("forged", "yes")],
        KeyError,
        "interrupt_id=<forged> | no interrupt found",
    ),
}


@pytest.mark.parametrize(("prompt", "error_type", "text"), REFUSED_PROMPTS.values(), ids=REFUSED_PROMPTS.keys())
def test_refused_resume_raises_the_same_error_and_leaves_the_same_state(
    prompt: Any, error_type: type[Exception], text: str
) -> None:
    states = {SIGNOFF.name: interrupted(SIGNOFF), STRANDS.name: interrupted(STRANDS)}

    ours, theirs = failure_on_both(lambda impl: states[impl.name].resume(prompt))

    assert type(ours) is type(theirs) is error_type
    assert ours.args == theirs.args == (text,)
    # A known id before the unknown one is answered by both: the same partial state, not a rollback.
    assert persisted(states[SIGNOFF.name]) == persisted(states[STRANDS.name])
    assert states[SIGNOFF.name]._get_version() == states[STRANDS.name]._get_version() == 0


# --- end_tool_cycle, end_interrupt_cycle --------------------------------------------------------


def test_end_tool_cycle_keeps_only_answered_agent_stream_interrupts(impl: Implementation) -> None:
    interrupt_state = impl.state(
        impl.interrupt(AGENT_STREAM_ID, "approve-run", response=""),
        impl.interrupt(OTHER_AGENT_STREAM_ID, "approve-spend"),
        impl.interrupt(TOOL_ID, "delete_file", response="yes"),
        impl.interrupt(OTHER_TOOL_ID, "send_mail"),
        context={"responses": []},
        activated=True,
        pending_tool_execution=impl.pending(message(), []),
    )

    interrupt_state.end_tool_cycle()

    assert interrupt_state == impl.state(impl.interrupt(AGENT_STREAM_ID, "approve-run", response=""))


def test_end_interrupt_cycle_releases_agent_stream_interrupts_and_nothing_else(impl: Implementation) -> None:
    interrupt_state = interrupted(impl)
    interrupt_state.resume([answer(AGENT_STREAM_ID, "approve")])

    interrupt_state.end_interrupt_cycle()

    assert list(interrupt_state.interrupts) == [TOOL_ID]
    assert interrupt_state.context == {"note": "kept", "responses": [answer(AGENT_STREAM_ID, "approve")]}
    assert interrupt_state.activated is True
    assert interrupt_state.pending_tool_execution == impl.pending(message(), [result("tooluse-0")])
    assert interrupt_state._get_version() == 2


def test_end_interrupt_cycle_with_nothing_to_release_is_no_mutation(impl: Implementation) -> None:
    interrupt_state = impl.state(impl.interrupt(TOOL_ID, "delete_file", response="yes"))

    interrupt_state.end_interrupt_cycle()

    assert interrupt_state == impl.state(impl.interrupt(TOOL_ID, "delete_file", response="yes"))
    assert interrupt_state._get_version() == 0


# --- to_dict ------------------------------------------------------------------------------------


def test_state_to_dict_writes_interrupts_context_activation_and_pending_execution(impl: Implementation) -> None:
    assert interrupted(impl).to_dict() == {
        "interrupts": {
            TOOL_ID: {"id": TOOL_ID, "name": "delete_file", "reason": {"path": "/tmp/x"}, "response": None},
            AGENT_STREAM_ID: {"id": AGENT_STREAM_ID, "name": "approve-run", "reason": "runs tools", "response": None},
        },
        "context": {"note": "kept"},
        "activated": True,
        "pending_tool_execution": {"assistant_message": message(), "completed_tool_results": [result("tooluse-0")]},
    }


def test_state_to_dict_is_the_same_text_on_both() -> None:
    same_on_both(lambda impl: persisted(interrupted(impl)))
    same_on_both(lambda impl: persisted(impl.state()))


def test_state_to_dict_has_no_pending_key_without_a_pending_execution(impl: Implementation) -> None:
    assert impl.state(activated=True).to_dict() == {"interrupts": {}, "context": {}, "activated": True}


def test_to_dict_while_deactivated_leaves_out_agent_stream_interrupts(impl: Implementation) -> None:
    interrupt_state = interrupted(impl)
    interrupt_state.resume([answer(AGENT_STREAM_ID, "approve")])
    interrupt_state.end_tool_cycle()
    interrupt_state.interrupts[TOOL_ID] = impl.interrupt(TOOL_ID, "delete_file", response="yes")

    assert list(interrupt_state.interrupts) == [AGENT_STREAM_ID, TOOL_ID]
    assert list(interrupt_state.to_dict()["interrupts"]) == [TOOL_ID]

    # Activated, the state is owed a resume, so it writes every interrupt.
    interrupt_state.activate()
    assert list(interrupt_state.to_dict()["interrupts"]) == [AGENT_STREAM_ID, TOOL_ID]


# --- from_dict ----------------------------------------------------------------------------------


def test_from_dict_restores_the_typed_pending_execution(impl: Implementation) -> None:
    # Legacy results without their legacy message are plain context and stay where they are.
    data = {
        "interrupts": {TOOL_ID: {"id": TOOL_ID, "name": "delete_file", "reason": "r", "response": None}},
        "context": {"tool_results": ["unrelated"]},
        "activated": True,
        "pending_tool_execution": {"assistant_message": message(), "completed_tool_results": [result()]},
    }

    assert impl.load(data) == impl.state(
        impl.interrupt(TOOL_ID, "delete_file", reason="r"),
        context={"tool_results": ["unrelated"]},
        activated=True,
        pending_tool_execution=impl.pending(message(), [result()]),
    )


def legacy_data(**extra: Any) -> dict[str, Any]:
    """A state written before ``pending_tool_execution`` existed: the batch sits in the context."""
    context = {"responses": [], "tool_use_message": message("legacy"), "tool_results": [result("legacy")]}
    return {"interrupts": {}, "context": context, "activated": True, **extra}


def test_from_dict_migrates_the_legacy_context_into_a_pending_execution(impl: Implementation) -> None:
    data = legacy_data()

    loaded = impl.load(data)

    assert loaded == impl.state(
        context={"responses": []},
        activated=True,
        pending_tool_execution=impl.pending(message("legacy"), [result("legacy")]),
    )
    assert data == legacy_data()


def test_from_dict_prefers_the_typed_pending_block_over_the_legacy_context(impl: Implementation) -> None:
    typed = {"assistant_message": message("typed"), "completed_tool_results": [result("typed")]}
    data = legacy_data(pending_tool_execution=typed)

    loaded = impl.load(data)

    assert loaded == impl.state(
        context={"responses": []},
        activated=True,
        pending_tool_execution=impl.pending(message("typed"), [result("typed")]),
    )
    assert data == legacy_data(pending_tool_execution=typed)


def test_from_dict_and_to_dict_share_nothing_with_the_pending_execution(impl: Implementation) -> None:
    interrupt_state = impl.state(activated=True, pending_tool_execution=impl.pending(message(), [result()]))

    data = interrupt_state.to_dict()
    loaded = impl.load(data)
    assert loaded == interrupt_state

    data["pending_tool_execution"]["completed_tool_results"][0]["status"] = "error"
    data["pending_tool_execution"]["assistant_message"]["content"].clear()
    assert interrupt_state.pending_tool_execution == impl.pending(message(), [result()])


def test_from_dict_while_deactivated_drops_agent_stream_interrupts(impl: Implementation) -> None:
    agent_stream = {"id": AGENT_STREAM_ID, "name": "approve-run", "reason": None, "response": "approve"}
    tool = {"id": TOOL_ID, "name": "delete_file", "reason": None, "response": "yes"}
    data = {"interrupts": {AGENT_STREAM_ID: agent_stream, TOOL_ID: tool}, "context": {}, "activated": False}

    assert list(impl.load(data).interrupts) == [TOOL_ID]
    assert list(impl.load({**data, "activated": True}).interrupts) == [AGENT_STREAM_ID, TOOL_ID]


def test_a_whole_interrupt_cycle_through_the_store_gives_the_same_text_at_each_step() -> None:
    def cycle(impl: Implementation) -> tuple[list[str], int]:
        interrupt_state = impl.state(impl.interrupt(AGENT_STREAM_ID, "approve-run"), impl.interrupt(TOOL_ID, "t"))
        interrupt_state.activate()
        interrupt_state.pending_tool_execution = impl.pending(message(), [])
        steps = [persisted(interrupt_state)]
        interrupt_state = impl.load(json.loads(steps[-1]))
        interrupt_state.resume([answer(AGENT_STREAM_ID, {"approved": True}), answer(TOOL_ID, 0)])
        interrupt_state.set_pending_tool_results([result()])
        steps.append(persisted(interrupt_state))
        interrupt_state.end_tool_cycle()
        steps.append(persisted(interrupt_state))
        steps.append(persisted(impl.load(json.loads(steps[-1]))))
        interrupt_state.end_interrupt_cycle()
        steps.append(persisted(interrupt_state))
        return steps, interrupt_state._get_version()

    steps, version = same_on_both(cycle)

    # After the tool cycle the approval is held in memory only; nothing of it reaches the store.
    assert steps[2:] == [json.dumps({"interrupts": {}, "context": {}, "activated": False})] * 3
    assert version == 4  # loaded at 0; resume, set_pending_tool_results, end_tool_cycle, end_interrupt_cycle


# --- where the two differ -----------------------------------------------------------------------


def test_a_malformed_pending_block_raises_each_ones_session_exception_from_a_type_error() -> None:
    data = {
        "interrupts": {},
        "context": {},
        "activated": True,
        "pending_tool_execution": {"assistant_message": message()},
    }

    ours, theirs = failure_on_both(lambda impl: impl.load(data))

    # Different classes of the same name: `state` must import without the optional Strands package.
    assert type(ours) is SessionException
    assert type(theirs) is StrandsSessionException
    assert type(ours).__name__ == type(theirs).__name__
    assert isinstance(ours.__cause__, TypeError)
    assert isinstance(theirs.__cause__, TypeError)
    assert str(ours) == str(theirs)
    assert str(ours).startswith("Failed to restore pending tool execution state: ")


def test_a_pending_block_that_is_no_mapping_is_named_by_each_ones_module() -> None:
    data = {"interrupts": {}, "context": {}, "activated": True, "pending_tool_execution": "not a mapping"}

    ours, theirs = failure_on_both(lambda impl: impl.load(data))

    # Python's own message names the class with its module; the rest of the text is the same.
    assert "state.interrupt.PendingToolExecution()" in str(ours)
    assert str(ours).replace("state.interrupt.", "strands.interrupt.") == str(theirs)


def test_only_signoff_pending_execution_has_to_dict() -> None:
    # Strands serializes the block with `dataclasses.asdict`; Signoff gives the class its own `to_dict`,
    # as `Interrupt` has, and `_InterruptState.to_dict` writes what it returns: the same dict.
    ours = SIGNOFF.pending(message(), [result()])
    theirs = STRANDS.pending(message(), [result()])

    assert not hasattr(theirs, "to_dict")
    assert ours.to_dict() == {"assistant_message": message(), "completed_tool_results": [result()]}
