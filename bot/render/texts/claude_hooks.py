"""What Claude Code's hooks say: on the request in Slack, and back to the session (its user and its model)."""

from typing import Final

_CWD_SHOWN: Final = 1000
"""Characters of the working directory named on the request: enough to recognise it, well inside a reason's 4000."""


def asked_from(session_id: str, cwd: str) -> str:
    """The request's reason in Slack: which Claude Code session asks, and where it runs."""
    shown = cwd if len(cwd) <= _CWD_SHOWN else f"…{cwd[-_CWD_SHOWN:]}"
    return f"Claude Code session {session_id} in {shown}"


def approved_by(who: str | None) -> str:
    """Why Claude Code runs the call (its user sees it)."""
    return f"Approved in Slack by {who or 'policy'}."


def stopped_waiting(wait_s: int) -> str:
    """The withdrawal's reason, shown on the Slack message once the hook's wait ended undecided."""
    return f"Claude Code stopped waiting after {wait_s} s; a decision now would have no effect"


def nobody_decided(wait_s: int, *, ask: bool) -> str:
    """What the session is told when nobody decided within the wait (never a person's denial)."""
    told = (
        "Claude Code asks its own user instead."
        if ask
        else "It is not a denial by a person: do not retry automatically, tell the user."
    )
    return f"Nobody decided in Slack within {wait_s} s; the sign-off request was withdrawn. {told}"


def too_busy(limit: int, *, ask: bool) -> str:
    """What the session is told when the bot holds its most waits already (nothing was asked in Slack)."""
    then = "Claude Code asks its own user instead." if ask else "Try again in a moment."
    return f"Signoff holds its most waits ({limit}) already; nothing was asked in Slack. {then}"
