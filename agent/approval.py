"""Approval gates: a hook that asks a human before risky tools run, and the decision it expects.

The human's answer travels as the interrupt's response: a ``Decision`` record (the bot builds
it from a click). Anything else fails closed: the call is refused. A refused call never runs,
and the model is told plainly why, in words that do not invite a blind retry.
"""

import hashlib
import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.hooks import AfterToolCallEvent, BeforeToolCallEvent, HookRegistry
from state.shapes import ToolUse

APPROVAL_INTERRUPT = "approval"

ResponseShape = Literal["record", "yes_no", "boolean"]
"""What the agent receives as an interrupt's response: the ``Decision`` record (as a JSON dict),
``"y"``/``"n"``, or ``True``/``False``. Only an approval gives ``"y"`` or ``True``: a denial and
an expiry both give ``"n"`` / ``False`` (only the record tells them apart)."""

RESPONSE_SHAPES: tuple[ResponseShape, ...] = ("record", "yes_no", "boolean")

AnswerShape = ResponseShape | Literal["answer"]
"""A response shape, or ``"answer"``: a question's response is its answer as given (``NO_ANSWER`` if none): the
person's words, the label or labels chosen, or the form's object."""

TRUST_ANSWER = "t"
"""What an approval that also trusts the tool gives in the ``yes_no`` shape (Strands' ``HumanInTheLoop`` trust)."""

NO_ANSWER = "No answer: nobody answered the question in time. Do not assume an answer; tell the user."
"""What a question's ``"answer"`` response is when nobody answered it (it expired, or was taken back)."""


class DiscussionEntry(BaseModel):
    """One reply in the approval message's thread."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: str
    text: str
    at: datetime


class Decision(BaseModel):
    """A human's (or the clock's) decision on one approval request.

    ``expired`` means nobody decided in time: it is never reported as a human denial.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision: Literal["approve", "deny", "expired", "answer"]
    """``answer``: a person answered a question (``answer``); the other three decide an approval."""
    decided_by: str | None = None
    """Who decided (the last approver when a quorum was needed); ``None`` for the clock."""
    approved_by: tuple[str, ...] = ()
    """Every approver counted, when a quorum of several was needed."""
    reason: str | None = None
    discussion: tuple[DiscussionEntry, ...] = Field(default_factory=tuple)
    decided_at: datetime
    by_rule: str | None = None
    """The policy rule that decided by itself (its tier ``allow`` or ``deny``), without asking anyone."""
    by_grant: str | None = None
    """The standing approval that covered the call (``decided_by`` made it): nobody was asked this time."""
    input_digest: str | None = None
    """``input_digest`` of the input the approval is for (the edited one, if edited): it runs only with exactly that."""
    updated_input: Any = None
    """The input an approver edited the call to, before approving it; ``None``: the call runs as the agent sent it."""
    edited_by: str | None = None
    """Who edited the call (``updated_input``)."""
    answer: str | list[str] | dict[str, Any] | None = None
    """A question's answer (``decision`` is ``answer``): the person's words exactly, the label chosen, the labels
    chosen (a question that lets several be chosen), or the object its form was filled in with."""
    trusted: bool = False
    """The approver also trusted the tool for the rest of the session (Strands' ``HumanInTheLoop`` trust)."""


def canonical_json(value: Any) -> str:
    """``value`` as one JSON text whatever the order of its keys (what digests are taken of)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def input_digest(tool_input: Any) -> str:
    """The SHA-256 (hex) of a tool's input: an approval names the exact arguments it allows."""
    return hashlib.sha256(canonical_json(tool_input).encode("utf-8", "surrogatepass")).hexdigest()


def approved_input(decision: Decision, tool_input: Any) -> tuple[Any, str | None]:
    """The input an approving ``decision`` lets run for a call sent with ``tool_input``, or why none may.

    An edited call runs with the approver's input; either way the input must be the one the decision names
    (``input_digest``): an approval given for other arguments never runs these.

    Returns:
        ``(input, None)``, or ``(None, refusal)`` with what the model is told.
    """
    runs = decision.updated_input if decision.updated_input is not None else tool_input
    if decision.input_digest is not None and input_digest(runs) != decision.input_digest:
        return None, (
            "Not executed: the approval was given for different arguments than this call's. "
            "Do not retry automatically; ask the user."
        )
    return runs, None


EDIT_NOTE_PREFIX = "Note: an approver edited this call before approving it."
"""How ``edit_note`` begins (a scripted model recognises it)."""


def edit_note(decision: Decision) -> str | None:
    """What the model is told next to the result of a call an approver edited (``None``: not edited)."""
    if decision.updated_input is None:
        return None
    return (
        f"{EDIT_NOTE_PREFIX} Edited by {decision.edited_by or 'an unnamed approver'}; "
        f"it ran with this input instead of yours: {canonical_json(decision.updated_input)}"
    )


def refusal_text(decision: Decision) -> str:
    """What the model is told when a call is refused."""
    if decision.decision == "expired":
        return (
            "Not executed: the approval request expired without a decision. "
            "Do not retry automatically; tell the user it needs a fresh approval."
        )
    reason = f": {decision.reason.rstrip('.')}" if decision.reason else " (no reason given)"
    if decision.by_rule is not None:
        return (
            f"Not executed: refused by the approval policy's rule {decision.by_rule!r}{reason}. "
            "Do not retry this call; explain the refusal to the user."
        )
    return (
        f"Not executed: denied by {decision.decided_by or 'an approver'}{reason}. "
        "Do not retry this call; explain the refusal to the user."
    )


def shape_response(decision: Decision, shape: AnswerShape) -> Any:
    """The interrupt response that carries ``decision`` in ``shape``."""
    if shape == "answer":
        return decision.answer if decision.decision == "answer" and decision.answer is not None else NO_ANSWER
    if shape == "yes_no":
        if decision.decision != "approve":
            return "n"
        return TRUST_ANSWER if decision.trusted else "y"
    if shape == "boolean":
        return decision.decision == "approve"
    return decision.model_dump(mode="json")


def parse_decision(response: Any) -> Decision | None:
    """Return the decision carried by an interrupt response, or ``None`` if it carries none."""
    try:
        return Decision.model_validate(response)
    except ValidationError:
        return None


def describe_call(tool_use: ToolUse, *, input_schema: Any = None) -> dict[str, Any]:
    """The interrupt reason for a tool call: what a human needs to decide.

    ``"response": "record"`` asks the bot for the decision record whatever the policy rule's
    ``response`` says: the gates read nothing else (and tell the model who refused and why).
    ``input_schema`` (the tool's JSON Schema, when known) lets an approver edit the call field by field.
    """
    reason = {
        "tool": tool_use["name"],
        "input": tool_use["input"],
        "toolUseId": tool_use["toolUseId"],
        "response": "record",
    }
    if isinstance(input_schema, dict):
        reason["inputSchema"] = input_schema.get("json", input_schema)  # Strands wraps it: {"json": {...}}
    return reason


class ApprovalGate:
    """Hook provider: calls to the named tools wait for an approving ``Decision``.

    Args:
        tools: Names of the tools that need approval, or a predicate on the call.
    """

    def __init__(self, tools: Iterable[str] | Callable[[ToolUse], bool]) -> None:
        """Keep which calls are gated."""
        self._edited: dict[str, str] = {}  # toolUseId -> the note its result carries (an edited call)
        if callable(tools):
            self._needs_approval = tools
        else:
            names = frozenset(tools)
            self._needs_approval = lambda tool_use: tool_use["name"] in names

    def register_hooks(self, registry: HookRegistry) -> None:
        """Gate every tool call."""
        registry.add_callback(BeforeToolCallEvent, self._gate)
        registry.add_callback(AfterToolCallEvent, self._note_edit)

    def _gate(self, event: BeforeToolCallEvent) -> None:
        if not self._needs_approval(event.tool_use):
            return
        schema = event.tool.spec.get("inputSchema") if event.tool is not None else None
        response = event.interrupt(APPROVAL_INTERRUPT, reason=describe_call(event.tool_use, input_schema=schema))
        decision = parse_decision(response)
        if decision is None:
            event.cancel_tool = "Not executed: the approval response was not understood. Do not retry automatically."
        elif decision.decision != "approve":
            event.cancel_tool = refusal_text(decision)
        else:
            runs, refusal = approved_input(decision, event.tool_use["input"])
            if refusal is not None:
                event.cancel_tool = refusal
            else:
                note = edit_note(decision)
                if note is not None:
                    self._edited[event.tool_use["toolUseId"]] = note
                    event.tool_use = {**event.tool_use, "input": runs}

    def _note_edit(self, event: AfterToolCallEvent) -> None:
        """Tell the model, with the result, that the call ran as an approver edited it."""
        note = self._edited.pop(event.tool_use["toolUseId"], None)
        if note is not None:
            event.result = {**event.result, "content": [{"text": note}, *event.result["content"]]}
