"""Strands' vended interrupts, known by name, and the response each one's code reads; questions, known by their reason.

Strands Agents 1.62 ships human-in-the-loop pieces that raise interrupts under fixed names. An agent
that uses them as Strands' docs show carries nothing of Signoff, so the bot answers each in the
shape its code expects: nothing in the agent or the policy has to ask for it.
"""

from dataclasses import dataclass
from typing import Any, Final

from agent.approval import ResponseShape

HUMAN_IN_THE_LOOP_INTERRUPT: Final = "strands:human-in-the-loop"
"""``strands.vended_interventions.hitl.HumanInTheLoop``: its default ``evaluate`` approves on ``True``,
``"y"`` or ``"yes"`` only, and with ``enable_trust=True`` ``"t"`` approves and trusts the tool."""

HANDOFF_INTERRUPT: Final = "strands:handoff-to-user"
"""``strands.vended_tools.handoff_to_user``: the reason is a question, the response the person's words."""
HANDOFF_TOOL: Final = "handoff_to_user"
"""The tool's name (unless renamed with ``make_handoff_to_user(name=...)``): it returns the person's answer, nothing
else, so running it again is harmless."""

CONFIRMATION_FAILED_PREFIX: Final = "CONFIRMATION_FAILED:"
"""How Strands begins the result of a call its ``HumanInTheLoop`` refused (the model is told the prompt only)."""


def expected_shape(interrupt_name: str) -> ResponseShape | None:
    """The response shape a vended interrupt's code reads (``None``: not a vended interrupt)."""
    if interrupt_name == HUMAN_IN_THE_LOOP_INTERRUPT:
        return "yes_no"
    return None


QUESTION_KEY: Final = "question"
"""An interrupt whose reason is a dict with this key (a non-blank string) asks a person that question."""
OPTIONS_KEY: Final = "options"
"""With ``QUESTION_KEY``: the answers to choose from (labels, or ``{"label", "description"}`` objects)."""
MULTIPLE_KEY: Final = "multiple"
"""With ``OPTIONS_KEY``: ``True`` lets the person choose several (the response is then a list of labels)."""
OTHER_KEY: Final = "other"
"""With ``OPTIONS_KEY``: ``True`` lets the person answer in words instead (the response is then the words)."""
SCHEMA_KEY: Final = "schema"
"""With ``QUESTION_KEY``: a JSON Schema object the answer fills in (the response is then an object)."""


@dataclass(frozen=True)
class AskedQuestion:
    """A question as an interrupt's reason asks it: its text and, as given (the bot checks them), what it offers.

    Attributes:
        text: The question.
        options: The reason's ``"options"`` (``None``: none given).
        multiple: The reason's ``"multiple"``.
        schema: The reason's ``"schema"`` (``None``: none given).
        other: The reason's ``"other"``.
    """

    text: str
    options: Any = None
    multiple: Any = False
    schema: Any = None
    other: Any = False


def question_of(interrupt_name: str, reason: Any) -> AskedQuestion | None:
    """The question an interrupt asks a person, if it asks for an answer rather than a decision.

    ``handoff_to_user``'s reason is its question; any other interrupt asks one with ``reason={"question": ...}``,
    answered in words, or chosen among ``"options"``, or filled in as ``"schema"`` describes.
    """
    if interrupt_name == HANDOFF_INTERRUPT and isinstance(reason, str):
        asked: Any = reason
        offered: dict[str, Any] = {}
    elif isinstance(reason, dict):
        asked = reason.get(QUESTION_KEY)
        offered = reason
    else:
        return None
    if not isinstance(asked, str) or not asked.strip():
        return None
    return AskedQuestion(
        asked,
        offered.get(OPTIONS_KEY),
        offered.get(MULTIPLE_KEY, False),
        offered.get(SCHEMA_KEY),
        offered.get(OTHER_KEY, False),
    )
