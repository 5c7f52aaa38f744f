"""The interrupt system: names, semantics and dict format of ``strands.interrupt`` (Strands Agents 1.62).

An interrupt pauses an agent until a human answers. ``_InterruptState`` is what a session
persists between the pause and the answer; its ``to_dict`` output loads in Strands'
``_InterruptState.from_dict`` unchanged, and the other way round (the compatibility tests prove it).

Two lifetimes exist. Interrupts raised by tools and tool hooks live for one tool cycle.
Interrupts whose id starts with ``_AGENT_STREAM_INTERRUPT_ID_PREFIX`` gate a whole invocation
pass: once answered they hold until the interrupt cycle ends, and they are never persisted or
restored while the state is deactivated, so an old answer cannot become a standing approval.
"""

import copy
from dataclasses import dataclass, field
from typing import Any, cast

from state.errors import SessionException
from state.shapes import InterruptResponseContent, Message, ToolResult

_AGENT_STREAM_INTERRUPT_ID_PREFIX = "v1:middleware_agent_stream:"
"""Id prefix of interrupts scoped to a whole invocation pass rather than to one tool call."""


def _is_invocation_scoped(interrupt_id: str) -> bool:
    return interrupt_id.startswith(_AGENT_STREAM_INTERRUPT_ID_PREFIX)


@dataclass
class Interrupt:
    """A request for human input that pauses the agent.

    Attributes:
        id: Deterministic, opaque identifier; pass it back unchanged to answer.
        name: The name the raiser chose (unique per hook dispatch or tool call).
        reason: Why the human is asked; any JSON-serializable value.
        response: The human's answer. ``None`` means unanswered; anything else, falsy values
            included, is an answer.
    """

    id: str
    name: str
    reason: Any = None
    response: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Serialize for the session, deep-copying reason and response."""
        return {
            "id": self.id,
            "name": self.name,
            "reason": copy.deepcopy(self.reason),
            "response": copy.deepcopy(self.response),
        }


class InterruptException(Exception):
    """Raised by ``interrupt()`` when the human has not answered yet."""

    def __init__(self, interrupt: Interrupt) -> None:
        """Keep the interrupt for whoever stops the agent loop."""
        self.interrupt = interrupt


@dataclass
class PendingToolExecution:
    """What is needed to resume tool execution without calling the model again.

    Attributes:
        assistant_message: The assistant message whose toolUse blocks are being executed.
        completed_tool_results: Results already produced (or synthesized) before the pause;
            these tools are never run again.
    """

    assistant_message: Message
    completed_tool_results: list[ToolResult]

    def to_dict(self) -> dict[str, Any]:
        """Serialize as Strands does (a deep copy of both fields)."""
        return {
            "assistant_message": copy.deepcopy(self.assistant_message),
            "completed_tool_results": copy.deepcopy(self.completed_tool_results),
        }


@dataclass
class _InterruptState:
    """The interrupt bookkeeping of one agent, persisted with its session.

    Attributes:
        interrupts: Raised interrupts by id. May be non-empty while not activated: answered
            invocation-scoped interrupts are kept until their interrupt cycle ends.
        context: Extra data of the interrupt event (``"responses"`` after a resume).
        activated: True while the agent is stopped on interrupts.
        pending_tool_execution: The tool batch to finish on resume, if any.
    """

    interrupts: dict[str, Interrupt] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    activated: bool = False
    pending_tool_execution: PendingToolExecution | None = None
    _version: int = field(default=0, compare=False, repr=False)

    def activate(self) -> None:
        """Enter the interrupt state."""
        self.activated = True
        self._version += 1

    def deactivate(self) -> None:
        """Leave the interrupt state, forgetting interrupts, context and pending execution."""
        self.interrupts = {}
        self.context = {}
        self.activated = False
        self.pending_tool_execution = None
        self._version += 1

    def end_tool_cycle(self) -> None:
        """Close a finished tool cycle; only answered invocation-scoped interrupts survive it."""
        self.interrupts = {
            interrupt_id: interrupt
            for interrupt_id, interrupt in self.interrupts.items()
            if _is_invocation_scoped(interrupt_id) and interrupt.response is not None
        }
        self.context = {}
        self.activated = False
        self.pending_tool_execution = None
        self._version += 1

    def end_interrupt_cycle(self) -> None:
        """Release every invocation-scoped interrupt; counts as a mutation only if one existed."""
        kept = {
            interrupt_id: interrupt
            for interrupt_id, interrupt in self.interrupts.items()
            if not _is_invocation_scoped(interrupt_id)
        }
        if len(kept) == len(self.interrupts):
            return
        self.interrupts = kept
        self._version += 1

    def resume(self, prompt: Any) -> None:
        """Record the humans' responses when the agent is invoked again.

        Args:
            prompt: The new invocation's input. While activated it must be a list of
                ``{"interruptResponse": {"interruptId": ..., "response": ...}}`` blocks.

        Raises:
            TypeError: The prompt is not a list, or holds another kind of block.
            KeyError: A response names an interrupt that was not raised.
        """
        if not self.activated:
            return

        if not isinstance(prompt, list):
            # No angle brackets around the type: Strands 1.62's message, character for character.
            raise TypeError(f"prompt_type={type(prompt)} | must resume from interrupt with list of interruptResponse's")
        other_types = [key for block in prompt for key in block if key != "interruptResponse"]
        if other_types:
            raise TypeError(
                f"content_types=<{other_types}> | must resume from interrupt with list of interruptResponse's"
            )

        responses = cast(list[InterruptResponseContent], prompt)
        for block in responses:
            interrupt_id = block["interruptResponse"]["interruptId"]
            if interrupt_id not in self.interrupts:
                raise KeyError(f"interrupt_id=<{interrupt_id}> | no interrupt found")
            self.interrupts[interrupt_id].response = block["interruptResponse"]["response"]

        self.context["responses"] = responses
        self._version += 1

    def set_pending_tool_results(self, completed_tool_results: list[ToolResult]) -> None:
        """Replace the completed results of the pending execution (no-op without one)."""
        if self.pending_tool_execution is None:
            return
        self.pending_tool_execution.completed_tool_results = completed_tool_results
        self._version += 1

    def _get_version(self) -> int:
        """Return the mutation counter; compare two readings to know whether a save is due."""
        return self._version

    def to_dict(self) -> dict[str, Any]:
        """Serialize in the Strands 1.62 session format.

        While deactivated, invocation-scoped interrupts are left out: persisting an answered one
        would hand a restored agent a standing approval.
        """
        data: dict[str, Any] = {
            "interrupts": {
                interrupt_id: interrupt.to_dict()
                for interrupt_id, interrupt in self.interrupts.items()
                if self.activated or not _is_invocation_scoped(interrupt_id)
            },
            "context": self.context,
            "activated": self.activated,
        }
        if self.pending_tool_execution is not None:
            data["pending_tool_execution"] = self.pending_tool_execution.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "_InterruptState":
        """Restore from ``to_dict`` output (ours or Strands'), without mutating ``data``.

        A legacy ``context["tool_use_message"]`` / ``context["tool_results"]`` pair becomes a
        ``PendingToolExecution``; a typed ``pending_tool_execution`` wins when both exist.

        Raises:
            SessionException: The ``pending_tool_execution`` block is malformed.
        """
        activated: bool = data["activated"]
        context: dict[str, Any] = dict(data["context"])
        legacy_message = context.pop("tool_use_message", None)
        legacy_results = context.pop("tool_results", []) if legacy_message is not None else []

        pending_data = data.get("pending_tool_execution")
        pending: PendingToolExecution | None = None
        if pending_data is not None:
            try:
                pending = PendingToolExecution(**pending_data)
            except TypeError as error:
                raise SessionException(f"Failed to restore pending tool execution state: {error}") from error
        elif legacy_message is not None:
            pending = PendingToolExecution(assistant_message=legacy_message, completed_tool_results=legacy_results)

        return cls(
            interrupts={
                interrupt_id: Interrupt(**interrupt_data)
                for interrupt_id, interrupt_data in data["interrupts"].items()
                if activated or not _is_invocation_scoped(interrupt_id)
            },
            context=context,
            activated=activated,
            pending_tool_execution=pending,
        )
