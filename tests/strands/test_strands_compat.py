"""Wire compatibility of ``state.interrupt`` with Strands Agents 1.62's ``strands.interrupt``, both ways.

Every property draws serialized interrupt states in the Strands 1.62 dict format (deterministic
interrupt ids of every scope, JSON reasons and responses with falsy answers, typed and legacy
pending tool executions, resume responses in the context) and checks that our implementation and
Strands' read, write and mutate them identically. "Identically" is strict: besides ``==``, the
types of all values (``False`` is not ``0``) and the key order of every dict must agree.
"""

import copy
import json
import string
import uuid
from typing import Any

import pytest
import strands.interrupt as strands_interrupt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strands.types.exceptions import SessionException as StrandsSessionException

from state import SessionException
from state.interrupt import _AGENT_STREAM_INTERRUPT_ID_PREFIX, Interrupt, _InterruptState
from state.validation import check_interrupt_state

TheirState: Any = strands_interrupt._InterruptState

AGENT_STREAM_PREFIX = "v1:middleware_agent_stream:"

# Budgeted for the whole file to run in well under 20 s on two slow cores; no deadline, so a slow
# example on a busy machine is never a failure.
_EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_FEW_EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_MUTATION_EXAMPLES = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- strict comparison -------------------------------------------------------------------------


def _tagged(value: Any) -> Any:
    """A form of ``value`` whose equality also compares types and dict key order."""
    if isinstance(value, dict):
        return ("dict", tuple((_tagged(key), _tagged(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_tagged(item) for item in value))
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def assert_identical(ours: Any, theirs: Any) -> None:
    """Equal values, equal types everywhere (``False`` is not ``0``), equal dict key order."""
    assert ours == theirs
    assert _tagged(ours) == _tagged(theirs)


# --- strategies: the Strands 1.62 dict format --------------------------------------------------

_SCALARS: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["Approve ✅", "Löschen bestätigen?", "送信してよいですか", "🚀 deploy prod", "rm -rf /tmp/x"]),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=8), children, max_size=3),
    ),
    max_leaves=5,
)
falsy_answers: st.SearchStrategy[Any] = st.one_of(
    st.just(False), st.just(0), st.just(0.0), st.just(""), st.builds(list), st.builds(dict)
)
responses: st.SearchStrategy[Any] = st.one_of(st.none(), falsy_answers, json_values)
"""A human's answer: ``None`` means unanswered; anything else, falsy values included, is an answer."""

tool_use_ids: st.SearchStrategy[str] = st.text(string.ascii_letters + string.digits, min_size=4, max_size=10).map(
    lambda suffix: f"tooluse_{suffix}"
)
tool_names = st.sampled_from(["shell", "delete_file", "send_email", "http_request", "transfer_funds"])
interrupt_names: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(["approval", "confirm", "strands-hitl", "Bestätigung", "承認"]),
    st.text(min_size=1, max_size=10),
)


def _invocation_scoped_id(name: str) -> str:
    return f"{AGENT_STREAM_PREFIX}{uuid.uuid5(uuid.NAMESPACE_OID, name)}"


@st.composite
def tool_use_blocks(draw: st.DrawFn) -> dict[str, Any]:
    """A ``{"toolUse": {...}}`` content block."""
    tool_input = draw(
        st.dictionaries(st.sampled_from(["path", "command", "to", "amount", "body"]), json_values, max_size=2)
    )
    return {"toolUse": {"toolUseId": draw(tool_use_ids), "name": draw(tool_names), "input": tool_input}}


@st.composite
def tool_results(draw: st.DrawFn, ids: st.SearchStrategy[str]) -> dict[str, Any]:
    """A completed ``ToolResult`` for one of ``ids``."""
    content = draw(
        st.lists(
            st.one_of(
                st.builds(lambda text: {"text": text}, st.text(max_size=12)),
                st.builds(lambda value: {"json": value}, json_values),
            ),
            min_size=1,
            max_size=2,
        )
    )
    return {"toolUseId": draw(ids), "status": draw(st.sampled_from(["success", "error"])), "content": content}


@st.composite
def assistant_messages(draw: st.DrawFn) -> dict[str, Any]:
    """An assistant message in Converse shape with 1-3 toolUse blocks (unique ids), maybe text first."""
    uses = draw(st.lists(tool_use_blocks(), min_size=1, max_size=3, unique_by=lambda b: b["toolUse"]["toolUseId"]))
    preamble = draw(st.lists(st.builds(lambda text: {"text": text}, st.text(max_size=12)), max_size=1))
    return {"role": "assistant", "content": [*preamble, *uses]}


def _message_tool_use_ids(message: dict[str, Any]) -> list[str]:
    return [block["toolUse"]["toolUseId"] for block in message["content"] if "toolUse" in block]


@st.composite
def completed_results(draw: st.DrawFn, message: dict[str, Any]) -> list[dict[str, Any]]:
    """Results already produced for some of the message's tool uses."""
    done = draw(st.lists(st.sampled_from(_message_tool_use_ids(message)), unique=True))
    return [draw(tool_results(st.just(tool_use_id))) for tool_use_id in done]


@st.composite
def pending_blocks(draw: st.DrawFn) -> dict[str, Any]:
    """A typed ``pending_tool_execution`` block."""
    message = draw(assistant_messages())
    return {"assistant_message": message, "completed_tool_results": draw(completed_results(message))}


@st.composite
def interrupt_records(draw: st.DrawFn, ids: list[str]) -> dict[str, Any]:
    """One serialized interrupt with a realistic deterministic id of any scope."""
    scope = draw(st.sampled_from(["tool_call", "before_tool_call", "before_tools", "agent_stream"]))
    name = draw(interrupt_names)
    name_uuid = uuid.uuid5(uuid.NAMESPACE_OID, name)
    if scope == "agent_stream":
        interrupt_id = _invocation_scoped_id(name)
    elif scope == "before_tools":
        interrupt_id = f"v1:before_tools:{name_uuid}"
    else:
        interrupt_id = f"v1:{scope}:{draw(st.sampled_from(ids))}:{name_uuid}"
    record = {"id": interrupt_id, "name": name, "reason": draw(json_values), "response": draw(responses)}
    # Records written by hand (or by an older writer) may leave the defaults out.
    for key in ("reason", "response"):
        if record[key] is None and draw(st.booleans()):
            del record[key]
    return record


@st.composite
def serialized_states(draw: st.DrawFn) -> dict[str, Any]:
    """A serialized ``_InterruptState`` in the Strands 1.62 dict format."""
    message = draw(assistant_messages())
    ids = _message_tool_use_ids(message)
    records = draw(st.lists(interrupt_records(ids), max_size=4, unique_by=lambda record: record["id"]))
    context: dict[str, Any] = {}
    data: dict[str, Any] = {"interrupts": {record["id"]: record for record in records}, "context": context}
    data["activated"] = draw(st.booleans())

    with_responses = draw(st.booleans())
    if records and with_responses:
        answered = draw(st.lists(st.sampled_from(records), min_size=1, unique_by=lambda record: record["id"]))
        context["responses"] = [
            {"interruptResponse": {"interruptId": record["id"], "response": record.get("response")}}
            for record in answered
        ]
    if draw(st.integers(0, 7)) == 0:
        context["trace"] = draw(json_values)

    pending = draw(
        st.sampled_from(["absent", "null", "typed", "legacy", "legacy_message_only", "legacy_and_typed", "orphan"])
    )
    if pending == "null":
        data["pending_tool_execution"] = None
    if pending in ("typed", "legacy_and_typed"):
        data["pending_tool_execution"] = {
            "assistant_message": message,
            "completed_tool_results": draw(completed_results(message)),
        }
    if pending in ("legacy", "legacy_and_typed"):
        # A different batch, so that it shows if the legacy context wins over the typed block.
        legacy_message = draw(assistant_messages())
        context["tool_use_message"] = legacy_message
        context["tool_results"] = draw(completed_results(legacy_message))
    if pending == "legacy_message_only":
        context["tool_use_message"] = message
    if pending == "orphan":
        # Legacy results without their message stay plain context.
        context["tool_results"] = draw(completed_results(message))
    return data


# --- properties: round trips -------------------------------------------------------------------


def test_same_invocation_scope_prefix() -> None:
    assert (
        _AGENT_STREAM_INTERRUPT_ID_PREFIX == strands_interrupt._AGENT_STREAM_INTERRUPT_ID_PREFIX == AGENT_STREAM_PREFIX
    )


@_EXAMPLES
@given(serialized_states())
def test_ours_output_loads_in_strands_unchanged(data: dict[str, Any]) -> None:
    """(a) What we write, Strands reads and writes back exactly, also after a JSON round trip."""
    _reads_back_exactly(TheirState, _InterruptState.from_dict(data).to_dict())


@_EXAMPLES
@given(serialized_states())
def test_strands_output_loads_in_ours_unchanged(data: dict[str, Any]) -> None:
    """(b) What Strands writes, we read and write back exactly, also after a JSON round trip."""
    _reads_back_exactly(_InterruptState, TheirState.from_dict(data).to_dict())


def _reads_back_exactly(reader: type[_InterruptState] | type[TheirState], written: dict[str, Any]) -> None:
    """``reader`` reads ``written`` and writes it back to the letter, also after a JSON round trip."""
    for state in (written, json.loads(json.dumps(written))):
        assert_identical(reader.from_dict(state).to_dict(), state)


@_EXAMPLES
@given(serialized_states())
def test_same_round_trip_as_strands(data: dict[str, Any]) -> None:
    """(c) From the same input, both produce the same dict (and the typed pending block wins)."""
    ours = _InterruptState.from_dict(data)
    theirs = TheirState.from_dict(data)
    assert_identical(ours.to_dict(), theirs.to_dict())
    assert ours._get_version() == theirs._get_version() == 0

    legacy_message = data["context"].get("tool_use_message")
    typed = data.get("pending_tool_execution")
    out = ours.to_dict()
    assert "tool_use_message" not in out["context"]
    if typed is not None:
        assert_identical(out["pending_tool_execution"], typed)
    elif legacy_message is not None:
        assert_identical(
            out["pending_tool_execution"],
            {"assistant_message": legacy_message, "completed_tool_results": data["context"].get("tool_results", [])},
        )
    else:
        assert "pending_tool_execution" not in out


@_EXAMPLES
@given(serialized_states())
def test_from_dict_never_mutates_its_input(data: dict[str, Any]) -> None:
    """(d) Loading (and serializing what was loaded) leaves the caller's dict as it was."""
    before = copy.deepcopy(data)
    _InterruptState.from_dict(data).to_dict()
    assert_identical(data, before)


@_EXAMPLES
@given(serialized_states())
def test_our_output_passes_validation(data: dict[str, Any]) -> None:
    """(e) Everything we write is accepted by the store's validation on load."""
    out = _InterruptState.from_dict(data).to_dict()
    assert check_interrupt_state(out) is out
    assert check_interrupt_state(json.loads(json.dumps(out))) is not None


# --- properties: mutators ----------------------------------------------------------------------

_RESUME = st.tuples(st.just("resume"), st.lists(st.tuples(st.integers(0, 7), responses), min_size=1, max_size=4))
"""Picks index the interrupts present when the operation runs (an empty list when there are none)."""
answer_lists: st.SearchStrategy[list[Any]] = st.lists(responses.filter(lambda r: r is not None), min_size=1, max_size=4)
_ANSWER_ALL = st.tuples(st.just("answer_all"), answer_lists)
"""A resume that answers every interrupt present, cycling through the drawn answers."""
_RAISE = st.tuples(st.just("raise"), interrupt_records(["tooluse_raised1", "tooluse_raised2"]))
"""A tool or hook raising an interrupt, as ``event.interrupt()`` does: ``setdefault`` on the dict."""
_SET_RESULTS = st.tuples(st.just("set_pending_tool_results"), st.lists(tool_results(tool_use_ids), max_size=3))


def _plain(name: str) -> st.SearchStrategy[tuple[str, Any]]:
    return st.tuples(st.just(name), st.none())


# Repeated branches weigh the draw towards real interrupt cycles (raise, activate, answer, close)
# so that sequences reach the interesting states: answered invocation-scoped interrupts kept after
# a tool cycle, hidden while deactivated, then released or dropped on reload. Hypothesis favours
# the first and last branches, hence activate first and a resume last.
operations: st.SearchStrategy[tuple[str, Any]] = st.one_of(
    _plain("activate"),
    _RAISE,
    _RESUME,
    _plain("end_tool_cycle"),
    _plain("end_interrupt_cycle"),
    _SET_RESULTS,
    _plain("deactivate"),
    _plain("reload"),
    _ANSWER_ALL,
    _plain("activate"),
    _plain("end_interrupt_cycle"),
    _ANSWER_ALL,
)


def _apply(state: Any, op: str, arg: Any, interrupt_ids: list[str]) -> Any:
    """Run one operation on either implementation; return the state to continue with."""
    if op == "reload":
        # Persist and restore, as the store does between two turns.
        return type(state).from_dict(json.loads(json.dumps(state.to_dict())))
    if op == "raise":
        interrupt_class = Interrupt if isinstance(state, _InterruptState) else strands_interrupt.Interrupt
        record = {"reason": None, "response": None, **copy.deepcopy(arg)}
        state.interrupts.setdefault(record["id"], interrupt_class(**record))
    elif op in ("resume", "answer_all", "answer"):
        if op == "answer":
            by_id = arg
        elif op == "resume":
            by_id = [(interrupt_ids[index % len(interrupt_ids)], answer) for index, answer in arg if interrupt_ids]
        else:
            by_id = [(interrupt_id, arg[index % len(arg)]) for index, interrupt_id in enumerate(interrupt_ids)]
        blocks = [
            {"interruptResponse": {"interruptId": interrupt_id, "response": answer}} for interrupt_id, answer in by_id
        ]
        state.resume(copy.deepcopy(blocks))
    elif op == "set_pending_tool_results":
        state.set_pending_tool_results(copy.deepcopy(arg))
    else:
        getattr(state, op)()
    return state


def _run_both(data: dict[str, Any], ops: list[tuple[str, Any]]) -> None:
    """Load ``data`` in both implementations, run ``ops`` on both, compare after every step."""
    before = copy.deepcopy(data)
    ours: Any = _InterruptState.from_dict(data)
    theirs: Any = TheirState.from_dict(data)
    for op, arg in ops:
        interrupt_ids = list(ours.interrupts)
        assert interrupt_ids == list(theirs.interrupts)
        ours = _apply(ours, op, arg, interrupt_ids)
        theirs = _apply(theirs, op, arg, interrupt_ids)
        out = ours.to_dict()
        assert_identical(out, theirs.to_dict())
        assert ours._get_version() == theirs._get_version()
        assert check_interrupt_state(out) is out
    # Nothing done to the loaded states reaches the dict they were loaded from.
    assert_identical(data, before)


@_MUTATION_EXAMPLES
@given(serialized_states(), st.lists(operations, min_size=3, max_size=16))
def test_same_mutations_as_strands(data: dict[str, Any], ops: list[tuple[str, Any]]) -> None:
    """(f) The same operations from the same start: same dict and same version after every step."""
    _run_both(data, ops)


@_FEW_EXAMPLES
@given(
    serialized_states(),
    st.lists(interrupt_names, min_size=2, max_size=2, unique=True),
    responses.filter(lambda r: r is not None),
    st.lists(operations, max_size=6),
)
def test_invocation_scoped_interrupts_live_as_in_strands(
    data: dict[str, Any], names: list[str], answer: Any, tail: list[tuple[str, Any]]
) -> None:
    """(f) Two invocation-scoped interrupts, one answered: a tool cycle ends, then whatever follows.

    The answered one outlives the tool cycle (hidden while deactivated), the other does not.
    """
    answered_id, unanswered_id = (_invocation_scoped_id(name) for name in names)
    interrupts = dict(data["interrupts"])
    for interrupt_id, name in zip((answered_id, unanswered_id), names, strict=True):
        interrupts[interrupt_id] = {"id": interrupt_id, "name": name, "reason": {"ask": "run?"}, "response": None}
    data = {**data, "activated": True, "interrupts": interrupts}
    _run_both(data, [("answer", [(answered_id, answer)]), ("end_tool_cycle", None), *tail])


# --- properties: refused input -----------------------------------------------------------------


def _activated_pair(data: dict[str, Any]) -> tuple[Any, Any]:
    ours = _InterruptState.from_dict(data)
    theirs = TheirState.from_dict(data)
    ours.activate()
    theirs.activate()
    return ours, theirs


def _failure(call: Any) -> Exception:
    try:
        call()
    except Exception as error:
        return error
    raise AssertionError("no exception")


def _assert_same_resume_failure(data: dict[str, Any], prompt: Any, expected: type[Exception]) -> None:
    ours, theirs = _activated_pair(data)
    our_error = _failure(lambda: ours.resume(copy.deepcopy(prompt)))
    their_error = _failure(lambda: theirs.resume(copy.deepcopy(prompt)))
    assert type(our_error) is expected
    assert type(their_error) is expected
    # Messages are part of the contract: the same words, character for character.
    assert str(our_error) == str(their_error)
    # Whatever was applied before the failure, the same was applied.
    assert_identical(ours.to_dict(), theirs.to_dict())
    assert ours._get_version() == theirs._get_version()


non_list_prompts: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.text(max_size=10),
    st.integers(),
    st.dictionaries(st.text(max_size=5), json_values, max_size=2),
    st.tuples(st.just({"interruptResponse": {"interruptId": "x", "response": True}})),
)


@_FEW_EXAMPLES
@given(serialized_states(), non_list_prompts)
def test_resume_with_non_list_fails_alike(data: dict[str, Any], prompt: Any) -> None:
    _assert_same_resume_failure(data, prompt, TypeError)


@_FEW_EXAMPLES
@given(serialized_states(), st.data())
def test_resume_with_wrong_block_type_fails_alike(data: dict[str, Any], draw: st.DataObject) -> None:
    answers = [
        {"interruptResponse": {"interruptId": interrupt_id, "response": True}} for interrupt_id in data["interrupts"]
    ]
    wrong = draw.draw(
        st.one_of(
            st.builds(lambda text: {"text": text}, st.text(max_size=10)),
            st.builds(lambda result: {"toolResult": result}, tool_results(tool_use_ids)),
            st.just({"interruptResponse": {"interruptId": "x", "response": 1}, "text": "and a note"}),
        )
    )
    position = draw.draw(st.integers(0, len(answers)))
    _assert_same_resume_failure(data, [*answers[:position], wrong, *answers[position:]], TypeError)


@_FEW_EXAMPLES
@given(serialized_states(), st.data())
def test_resume_with_unknown_id_fails_alike(data: dict[str, Any], draw: st.DataObject) -> None:
    unknown = draw.draw(
        st.one_of(interrupt_names.map(_invocation_scoped_id), st.text(max_size=20)).filter(
            lambda interrupt_id: interrupt_id not in data["interrupts"]
        )
    )
    answers = [
        {"interruptResponse": {"interruptId": interrupt_id, "response": draw.draw(responses)}}
        for interrupt_id in data["interrupts"]
    ]
    position = draw.draw(st.integers(0, len(answers)))
    unknown_block = {"interruptResponse": {"interruptId": unknown, "response": "yes"}}
    _assert_same_resume_failure(data, [*answers[:position], unknown_block, *answers[position:]], KeyError)


malformed_pending: st.SearchStrategy[Any] = st.one_of(
    pending_blocks().map(lambda block: {"assistant_message": block["assistant_message"]}),
    pending_blocks().map(lambda block: {"completed_tool_results": block["completed_tool_results"]}),
    pending_blocks().map(lambda block: {**block, "tool_use_id": "tooluse_x"}),
    st.builds(dict),
    st.lists(json_values, max_size=2),
    st.text(max_size=5),
    st.sampled_from([0, 1, True, False, 2.5]),
)


@_FEW_EXAMPLES
@given(serialized_states(), malformed_pending)
def test_malformed_pending_block_fails_alike(data: dict[str, Any], pending: Any) -> None:
    data = {**data, "pending_tool_execution": pending}
    with pytest.raises(SessionException) as ours:
        _InterruptState.from_dict(data)
    with pytest.raises(StrandsSessionException) as theirs:
        TheirState.from_dict(data)
    assert isinstance(ours.value.__cause__, TypeError)
    assert isinstance(theirs.value.__cause__, TypeError)
    # Python's own words name the class by its module; everything else is the same.
    assert str(ours.value).replace("state.interrupt.", "strands.interrupt.") == str(theirs.value)
