"""Calls that started: the durable "started" mark, and what a redelivered run does with it.

Before a tool that is not declared idempotent runs, its toolUseId is marked started in the
agent's state and the session is saved; the mark goes when the call's result is recorded (in
the same save). A run that finds a call started but not recorded cannot know whether the tool
took effect (the worker died, or Redis failed, after it began). The policy:

- a tool declared idempotent runs again;
- any other call is never re-run silently: the agent stops on a new ``rerun`` interrupt whose
  reason says the previous attempt may have run. Approve runs it again (and marks a new
  attempt: a second loss asks again, under ``rerun-2``); deny, expiry or an unreadable answer
  record it as not re-run, and the model is told so.

Both runtimes use this: ours (``agent.agent``) and the Strands bridge (``SignoffGate``).
"""

from collections.abc import Callable, Iterable
from typing import Any, Final, Protocol

from agent.approval import describe_call, parse_decision
from state.shapes import ToolUse

STARTED_CALLS: Final = "signoff_started_calls"
"""Agent-state key: toolUseId -> attempts started and not yet recorded."""
RERUN_INTERRUPT: Final = "rerun"
"""Name of the interrupt asking whether a call that may have run should run again (``rerun-<n>`` after n > 1 losses)."""

UNRECORDED_RESULT: Final = (
    "Outcome unknown: this call started, but its worker stopped before the result was recorded, so it may "
    "have run. Do not retry automatically; tell the user to check whether it took effect."
)


class StateLike(Protocol):
    """The agent state of either runtime (ours, or Strands' ``AgentState``)."""

    def get(self, key: str) -> Any:
        """The value under ``key``, or ``None``."""

    def set(self, key: str, value: Any) -> None:
        """Store a JSON value."""

    def delete(self, key: str) -> None:
        """Forget ``key``."""


def attempts_started(state: StateLike, tool_use_id: str) -> int:
    """How many attempts of the call started without their result being recorded."""
    return int((state.get(STARTED_CALLS) or {}).get(tool_use_id, 0))


def mark_started(state: StateLike, tool_use_id: str) -> None:
    """Count one more attempt of the call (save the session before the tool runs)."""
    started = dict(state.get(STARTED_CALLS) or {})
    started[tool_use_id] = int(started.get(tool_use_id, 0)) + 1
    state.set(STARTED_CALLS, started)


def clear_started(state: StateLike, tool_use_ids: Iterable[str]) -> None:
    """The calls' results are recorded (or they are closed): forget their marks."""
    started = state.get(STARTED_CALLS) or {}
    remaining = {key: value for key, value in started.items() if key not in set(tool_use_ids)}
    if remaining == started:
        return
    if remaining:
        state.set(STARTED_CALLS, remaining)
    else:
        state.delete(STARTED_CALLS)


def rerun_interrupt_name(attempts: int) -> str:
    """A fresh interrupt for every loss: an earlier answer never covers a later attempt."""
    return RERUN_INTERRUPT if attempts <= 1 else f"{RERUN_INTERRUPT}-{attempts}"


def is_rerun_interrupt(name: str) -> bool:
    """Whether an interrupt asks to run again a call that may have run."""
    return name == RERUN_INTERRUPT or name.startswith(f"{RERUN_INTERRUPT}-")


def rerun_reason(tool_use: ToolUse, attempts: int) -> dict[str, Any]:
    """What the human is shown: the call, and how many attempts may have run."""
    return {**describe_call(tool_use), "attempts": attempts}


def refuse_rerun(ask: Callable[[str, Any], Any], tool_use: ToolUse, attempts: int) -> str | None:
    """Ask a human whether a call that may have run should run again.

    Args:
        ask: The event's ``interrupt(name, reason)``: raises until a human answered.
        tool_use: The call.
        attempts: Attempts started and not recorded (at least 1).

    Returns:
        ``None`` to run it again, else the text the model gets instead of a result.
    """
    response = ask(rerun_interrupt_name(attempts), rerun_reason(tool_use, attempts))
    decision = parse_decision(response)
    if decision is not None and decision.decision == "approve":
        return None
    if decision is None:
        why = "the answer was not understood"
    elif decision.decision == "expired":
        why = "nobody decided in time"
    else:
        by = decision.decided_by or "an approver"
        why = f"{by} chose not to run it again" + (f": {decision.reason}" if decision.reason else "")
    return (
        f"Not run again: a previous attempt of this call may have run (its result was not recorded), and {why}. "
        "Do not retry automatically; tell the user to check whether it took effect."
    )
