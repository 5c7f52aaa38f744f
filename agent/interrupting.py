"""The ``interrupt()`` that hook events and tool contexts offer."""

import math
import threading
from typing import Any

from agent.ids import Scope, interrupt_id
from state.interrupt import Interrupt, InterruptException, _InterruptState

# Concurrent tools register interrupts from worker threads while the loop thread serializes the
# state to save a finished result: both hold this lock so the dict never changes mid-iteration.
REGISTRY_LOCK = threading.Lock()


class Interruptible:
    """Mixin: ``interrupt(name, reason=...)`` for an event or context bound to one agent's state.

    An implementation sets ``_interrupt_state``, ``_interrupt_scope`` and ``_interrupt_tool_use_id``.
    """

    _interrupt_state: _InterruptState
    _interrupt_scope: Scope
    _interrupt_tool_use_id: str | None = None

    def interrupt(self, name: str, reason: Any = None, response: Any = None) -> Any:
        """Ask a human; return the answer once there is one.

        The interrupt is registered at once, so a later resume can answer it by id.

        Args:
            name: Unique among the interrupts of one hook dispatch or one tool call.
            reason: Why the human is asked (shown to them); JSON-serializable. A float that is not
                finite (JSON has no number for it) is kept as its name, ``"NaN"`` or ``"Infinity"``.
            response: An answer known in advance; when given, nobody is asked.

        Returns:
            The human's response (any value but ``None``; falsy values are answers too).

        Raises:
            InterruptException: No answer yet; the agent stops and reports the interrupt.
        """
        identifier = interrupt_id(self._interrupt_scope, name, self._interrupt_tool_use_id)
        with REGISTRY_LOCK:
            registered = self._interrupt_state.interrupts.setdefault(
                identifier, Interrupt(identifier, name, _finite(reason), response)
            )
        if registered.response is not None:
            return registered.response
        raise InterruptException(registered)


def _finite(value: Any) -> Any:
    """``value`` with each float that is not finite replaced by its name: the reason is stored as JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_finite(item) for item in value)
    return value
