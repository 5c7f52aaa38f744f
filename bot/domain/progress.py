"""What happened to a pending request so far, as its message shows it: votes, a claim, the ladder, an edit."""

from dataclasses import dataclass
from datetime import datetime

from bot.domain.edits import CallEdit


@dataclass(frozen=True)
class Progress:
    """What happened to a pending request so far (votes toward a quorum, a claim, the ladder)."""

    votes: tuple[str, ...] = ()
    claimed_by: str | None = None
    claimed_until: datetime | None = None
    level: int = 0
    edit: CallEdit | None = None
    """The input an approver edited the call to, if edited."""
