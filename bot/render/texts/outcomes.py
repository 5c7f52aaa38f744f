"""What a person is told of their attempt on a request, by what became of it (``bot.domain.status.Status``)."""

from collections.abc import Callable
from typing import Final, Protocol

from bot.domain.records import ApprovalRequest, Decision
from bot.domain.status import Status
from bot.render.texts import answers, editing, questions


class Attempted(Protocol):
    """What the texts need of an attempt (``bot.flow.outcomes.Outcome`` is one): read only when a text needs it."""

    @property
    def status(self) -> Status:
        """What became of the attempt."""

    @property
    def request(self) -> ApprovalRequest | None:
        """The request it was on, when it exists."""

    @property
    def decision(self) -> Decision | None:
        """The decision that stands."""

    @property
    def approvers_text(self) -> str:
        """Who may decide (for refusals)."""

    @property
    def votes(self) -> int:
        """Approvals counted so far toward the quorum."""


def _not_an_approver(attempt: Attempted) -> str:
    if attempt.request is not None and attempt.request.asks:
        return questions.not_asked_of_you(attempt.approvers_text)
    return answers.not_authorized(attempt.approvers_text)


def _not_a_member(attempt: Attempted) -> str | None:
    return answers.not_a_channel_member(attempt.request.channel_id) if attempt.request is not None else None


def _vote(attempt: Attempted) -> str | None:
    return answers.vote_recorded(attempt.votes, attempt.request.policy.quorum) if attempt.request is not None else None


# One entry per status; a status not listed (decided, taken) needs no word.
_TOLD: Final[dict[Status, Callable[[Attempted], str | None]]] = {
    Status.ALREADY: lambda attempt: answers.already_decided(attempt.decision) if attempt.decision else None,
    Status.NOT_AN_APPROVER: _not_an_approver,
    Status.SELF_APPROVAL: lambda _attempt: answers.self_approval_refused(),
    Status.UNKNOWN: lambda _attempt: answers.unknown_approval(),
    Status.UNAVAILABLE: lambda _attempt: answers.membership_unknown(),
    Status.WRONG_WORKSPACE: lambda _attempt: answers.other_workspace_refused(),
    Status.WRONG_PLACE: lambda _attempt: answers.wrong_place_refused(),
    Status.NOT_A_MEMBER: _not_a_member,
    Status.REASON_REQUIRED: lambda _attempt: answers.reason_required(),
    Status.VOTE: _vote,
    Status.VOTED: lambda _attempt: answers.already_voted(),
    Status.NO_CLAIMS: lambda _attempt: answers.takes_off(),
    Status.CHANGED: lambda _attempt: editing.CHANGED_TEXT,
    Status.EDITOR_APPROVAL: lambda _attempt: editing.EDITOR_APPROVAL_TEXT,
    Status.FORBIDDEN: lambda _attempt: editing.FORBIDDEN_TEXT,
    Status.UNCHANGED: lambda _attempt: editing.UNCHANGED_TEXT,
    Status.WRONG_ACTION: lambda _attempt: questions.wrong_action(),
    Status.INVALID: lambda _attempt: questions.blank_answer(),
}


def told(attempt: Attempted) -> str | None:
    """The ephemeral text for a refused or repeated attempt (``None``: nothing to say, as for ``decided``)."""
    text = _TOLD.get(attempt.status)
    return text(attempt) if text is not None else None
