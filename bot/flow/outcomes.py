"""What an attempt to decide comes to (``Outcome``), and what a person's attempt is (``Kind``, ``Replay``)."""

from dataclasses import dataclass
from typing import Literal

from bot.domain.records import ApprovalRequest, Decision
from bot.domain.status import Status
from bot.store.approvals.approval_record import Approval
from bot.store.approvals.decide_call import DecideResult

Kind = Literal["approve", "deny", "answer"]
"""What a person decides: an approval is approved or denied, a question answered."""


@dataclass(frozen=True)
class Replay:
    """A signed request's signature, refused if it comes again while it is remembered (``remember_s``)."""

    signature: str
    remember_s: int


@dataclass(frozen=True)
class Outcome:
    """What happened to an attempt.

    Attributes:
        status: ``decided`` or ``vote`` when it was recorded; otherwise why not.
        approval: The approval, when the caller read it.
        approvers_text: Who may decide (for refusals).
        votes: Approvals counted so far toward the quorum.
        recorded: What the decide script answered (its request and decision are read from it on demand).
    """

    status: Status
    approval: Approval | None = None
    approvers_text: str = ""
    votes: int = 0
    recorded: DecideResult | None = None

    @property
    def request(self) -> ApprovalRequest | None:
        """The request the attempt was on, when it exists."""
        if self.approval is not None:
            return self.approval.request
        return self.recorded.request if self.recorded is not None else None

    @property
    def decision(self) -> Decision | None:
        """The decision that stands (this one, or an earlier one for ``already``)."""
        if self.recorded is not None:
            return self.recorded.decision
        return self.approval.decision if self.approval is not None else None
