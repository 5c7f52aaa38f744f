"""Typed hook events, one class per moment of the loop, and the registry that dispatches them.

Events that may stop the agent offer ``interrupt(name, reason=...)`` (see ``Interruptible``).
One dispatch runs every callback even when some interrupt, so several callbacks can each ask
their own question in one stop; the same name twice in one dispatch is a ``ValueError``.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from agent.ids import Scope
from agent.interrupting import Interruptible
from state.interrupt import Interrupt, InterruptException, _InterruptState
from state.shapes import Message, ToolResult, ToolUse

if TYPE_CHECKING:
    from agent.tools import AgentTool


@dataclass
class HookEvent:
    """Base of every event.

    Attributes:
        agent: The agent in whose loop the event happens.
    """

    agent: Any


@dataclass
class BeforeInvocationEvent(HookEvent, Interruptible):
    """Before the agent works on a new prompt or a resume.

    ``interrupt()`` here is an invocation-scoped gate ("approve this whole run") whose answer holds until the run ends.
    """

    messages: list[Message]
    _interrupt_state: _InterruptState = field(default_factory=_InterruptState, repr=False)
    _interrupt_scope: Scope = field(default="middleware_agent_stream", init=False, repr=False)


@dataclass
class BeforeToolsEvent(HookEvent, Interruptible):
    """Before a batch of tool calls runs.

    Attributes:
        message: The assistant message holding the batch.
        tool_uses: The calls about to run (on resume: only those without a result).
        cancel: Set to ``True`` or a message to refuse every call of the batch.
    """

    message: Message
    tool_uses: list[ToolUse]
    cancel: bool | str = False
    _interrupt_state: _InterruptState = field(default_factory=_InterruptState, repr=False)
    _interrupt_scope: Scope = field(default="before_tools", init=False, repr=False)


@dataclass
class BeforeToolCallEvent(HookEvent, Interruptible):
    """Before one tool call runs.

    Attributes:
        tool_use: The call.
        tool: The tool that will run, ``None`` if the model named an unknown tool.
        cancel_tool: Set to ``True`` or a message to refuse the call; it then never runs.
    """

    tool_use: ToolUse
    tool: "AgentTool | None"
    cancel_tool: bool | str = False
    _interrupt_state: _InterruptState = field(default_factory=_InterruptState, repr=False)
    _interrupt_scope: Scope = field(default="before_tool_call", init=False, repr=False)

    def __post_init__(self) -> None:
        """Scope this event's interrupts to its call."""
        self._interrupt_tool_use_id = self.tool_use["toolUseId"]


@dataclass
class AfterToolCallEvent(HookEvent):
    """After one tool call produced its result (also for refused or failed calls).

    Attributes:
        tool_use: The call.
        result: Its result (an error result if it failed or was refused); callbacks may replace it.
    """

    tool_use: ToolUse
    result: ToolResult


@dataclass
class AfterInvocationEvent(HookEvent):
    """After the agent returned a result (completed, interrupted or stopped otherwise).

    Attributes:
        stop_reason: Why the run stopped.
    """

    stop_reason: str


_EventT = TypeVar("_EventT", bound=HookEvent)


class HookProvider(Protocol):
    """Anything that registers callbacks: it implements ``register_hooks(registry)``."""

    def register_hooks(self, registry: "HookRegistry") -> None:
        """Add this provider's callbacks to ``registry``."""


class HookRegistry:
    """Callbacks by event type, called in registration order."""

    def __init__(self) -> None:
        """Start empty."""
        self._callbacks: dict[type[HookEvent], list[Callable[[Any], None]]] = {}

    def add_callback(self, event_type: type[_EventT], callback: Callable[[_EventT], None]) -> None:
        """Call ``callback`` for every event of exactly ``event_type``."""
        self._callbacks.setdefault(event_type, []).append(callback)

    def add_hook(self, provider: HookProvider) -> None:
        """Let ``provider`` register its callbacks."""
        provider.register_hooks(self)

    def dispatch(self, event: _EventT) -> list[Interrupt]:
        """Run every callback for ``event``; return the interrupts they raised, in order.

        Raises:
            ValueError: Two callbacks raised interrupts of the same name.
        """
        raised: dict[str, Interrupt] = {}
        for callback in self._callbacks.get(type(event), []):
            try:
                callback(event)
            except InterruptException as exception:
                name = exception.interrupt.name
                if name in raised:
                    raise ValueError(f"interrupt_name=<{name}> | interrupt name used more than once") from exception
                raised[name] = exception.interrupt
        return list(raised.values())
