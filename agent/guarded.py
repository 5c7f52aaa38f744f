"""Which tool calls an interrupt guards, whatever raised it (our runtime or Strands).

An interrupt raised for one call carries that call's toolUseId in its id
(``v1:<scope>:<toolUseId>:<suffix>``: ``before_tool_call`` and ``tool_call`` here and in Strands,
plus the scopes Strands adds, some with the id URL-quoted); a batch interrupt (``before_tools``)
guards every call of the batch still waiting. The calls themselves are the toolUse blocks of the
interrupt state's pending execution that have no result yet. Nothing here trusts the interrupt's
reason: it is whatever the raiser wrote.
"""

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from state.interrupt import Interrupt
from state.shapes import ToolUse

_BATCH_SCOPE = "before_tools"


def waiting_calls(interrupt_state: Any) -> list[ToolUse]:
    """The calls of the interrupted batch without a result yet (empty unless interrupted).

    Args:
        interrupt_state: Our ``_InterruptState`` or Strands' (the same attributes).
    """
    pending = interrupt_state.pending_tool_execution
    if not interrupt_state.activated or pending is None:
        return []
    done = {result["toolUseId"] for result in pending.completed_tool_results}
    return [
        block["toolUse"]
        for block in pending.assistant_message["content"]
        if "toolUse" in block and block["toolUse"]["toolUseId"] not in done
    ]


def waiting_interrupts(interrupt_state: Any) -> list[Interrupt]:
    """The interrupts still waiting for an answer, as ``state.interrupt.Interrupt`` (empty unless interrupted).

    Args:
        interrupt_state: Strands' ``_InterruptState`` (an agent's or an orchestrator's), or ours.
    """
    if not interrupt_state.activated:
        return []
    return [
        Interrupt(id=interrupt.id, name=interrupt.name, reason=interrupt.reason)
        for interrupt in interrupt_state.interrupts.values()
        if interrupt.response is None
    ]


def guarded_calls(interrupt_id: str, waiting: Sequence[ToolUse]) -> list[ToolUse]:
    """The calls among ``waiting`` that the interrupt ``interrupt_id`` guards.

    Returns:
        One call for a per-call interrupt, every waiting call for a batch interrupt, none when
        the id names no waiting call (an invocation gate, an id of another form).
    """
    version, _, rest = interrupt_id.partition(":")
    scope, _, tail = rest.partition(":")
    if version != "v1" or not tail:
        return []
    if scope == _BATCH_SCOPE:
        return list(waiting)
    named = [
        call
        for call in waiting
        if tail.startswith(f"{call['toolUseId']}:") or tail.startswith(f"{quote(call['toolUseId'], safe='')}:")
    ]
    # toolUseIds may contain ':'; the longest one the id starts with is the call it names.
    named.sort(key=lambda call: len(call["toolUseId"]), reverse=True)
    return named[:1]
