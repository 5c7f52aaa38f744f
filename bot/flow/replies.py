"""Replies in a thread with open approvals: discussion that travels with the decision, or the decision itself.

Replies are kept with the open requests whose message was posted before they were written. A
reply can also carry the decision (``approve: <reason>`` / ``deny: <reason>``) when exactly
one open approval was already posted when the reply was written (its message ts at or before
the reply's ts); with several, the buttons must say which, and a request posted after the reply
(a later round, say) is never decided by it. The decide script checks the ts again atomically.
Such a reply is the decision (its text the reason), never discussion: refused, it goes nowhere.

A question is answered by a reply too: when the thread shows exactly one open question (posted before the reply),
asked in words, a reply from someone it asks is the answer, exactly as written; anyone else's reply is discussion.
"""

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Final

from bot.domain.records import DiscussionEntry
from bot.domain.status import Status
from bot.flow.access import Origin
from bot.flow.decisions import DecisionService
from bot.flow.outcomes import Kind, Outcome
from bot.store.approvals.approval_record import Approval, ApprovalDataError
from bot.store.approvals.approvals import ApprovalStore

_TYPED_DECISION: Final = re.compile(r"^\s*(approve|deny)\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Reply:
    """A person's reply in the thread of ``session_id``, written at ``written_at`` (its Slack ts)."""

    session_id: str
    user_id: str
    text: str
    written_at: str
    origin: Origin


@dataclass(frozen=True)
class TypedDecision:
    """A reply that carried a decision: what deciding did (``None``: not exactly one approval was ``seen``)."""

    kind: Kind
    seen: int
    """How many open approvals had their message posted when the reply was written."""
    outcome: Outcome | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadReplies:
    """Keeps thread replies with the approvals they are about, and decides the ones that carry a decision."""

    approvals: ApprovalStore
    decisions: DecisionService

    def take(self, reply: Reply) -> TypedDecision | None:
        """Keep ``reply`` as discussion (``None``, as when nothing is open) or decide what it types."""
        open_ids = sorted(self.approvals.open_ids(reply.session_id))
        if not open_ids:
            return None
        # Only requests whose message existed when the reply was written: a reply is never about a later one.
        loaded = {approval_id: self._load(reply.session_id, approval_id) for approval_id in open_ids}
        seen = [approval_id for approval_id in open_ids if _posted_before(loaded[approval_id], reply.written_at)]
        typed = _TYPED_DECISION.match(reply.text)
        if typed is None:
            questions = [approval_id for approval_id in seen if _asks(loaded[approval_id])]
            # Only a question asked in words takes words: options and forms are answered with their controls.
            if len(questions) == 1 and _asks_in_words(loaded[questions[0]]):
                answered = self._answer(reply, questions[0])
                if answered is not None:
                    return answered
            at = datetime.fromtimestamp(float(reply.written_at), UTC)
            entry = DiscussionEntry(user=reply.user_id, text=reply.text, at=at)
            for approval_id in seen:
                self.approvals.add_discussion(reply.session_id, approval_id, entry)
            return None
        # A typed decision is never discussion: a refused one must not reach the agent either.
        kind: Kind = "approve" if typed.group(1).lower() == "approve" else "deny"
        if len(seen) != 1:
            return TypedDecision(kind, len(seen))
        outcome = self.decisions.decide(
            seen[0],
            user_id=reply.user_id,
            kind=kind,
            reason=typed.group(2),
            source="reply",
            origin=reply.origin,
            written_at=reply.written_at,
            with_request=True,  # the answer names the request it decided
        )
        return TypedDecision(kind, 1, outcome)

    def _answer(self, reply: Reply, approval_id: str) -> TypedDecision | None:
        """Answer the one question the thread shows with ``reply``, if its writer is one it asks (else ``None``)."""
        outcome = self.decisions.decide(
            approval_id,
            user_id=reply.user_id,
            kind="answer",
            reason=reply.text,
            source="reply",
            origin=reply.origin,
            written_at=reply.written_at,
            with_request=True,
            quiet=True,  # someone else's reply is discussion, not an attempt to refuse
        )
        if outcome.status not in (Status.DECIDED, Status.ALREADY):
            return None
        return TypedDecision("answer", 1, outcome)

    def _load(self, session_id: str, approval_id: str) -> Approval | None:
        try:
            return self.approvals.get(session_id, approval_id)
        except ApprovalDataError:
            return None  # unreadable: it cannot be decided by a reply (its buttons answer why)


def _asks(approval: Approval | None) -> bool:
    return approval is not None and approval.request.asks


def _asks_in_words(approval: Approval | None) -> bool:
    question = approval.request.question if approval is not None else None
    return question is not None and question.kind == "text"


def _posted_before(approval: Approval | None, written_at: str) -> bool:
    """Whether the approval message existed when the reply was written (Slack ts, compared exactly)."""
    if approval is None or approval.request.message_ts is None:
        return False
    try:
        return Decimal(approval.request.message_ts) <= Decimal(written_at)
    except InvalidOperation:
        return False
