"""A request made through the HTTP API as the API shows it, and as its callback receives it.

An approval or a question, and where it stands (``Status``).
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from agent.approval import Decision
from bot.domain.api_requests import QuestionAsk, RequestKind
from bot.store.approvals.api_requests import StoredApiRequest
from bot.store.approvals.approval_record import Approval

Status = Literal["pending", "approved", "denied", "expired", "cancelled", "answered", "refused"]
"""An approval is pending, approved, denied, expired, cancelled, or answered (in words, when it offers it); a
question pending, answered, expired, cancelled, or refused (a rule of tier ``deny`` matched it: nobody was asked)."""


@dataclass(frozen=True)
class ApiRequestView:
    """A request made through the API and its approval (``None`` until its round is published)."""

    stored: StoredApiRequest
    approval: Approval | None

    @property
    def kind(self) -> RequestKind:
        """Whether it asks for a decision or for an answer."""
        return self.stored.record.kind

    @property
    def status(self) -> Status:
        """Where the request stands, as the API reports it."""
        decision = self.approval.decision if self.approval is not None else None
        if decision is None:
            return "pending"
        if decision.decision == "approve":
            return "approved"
        if decision.decision == "answer":
            return "answered"
        if decision.decision == "expired":
            return "expired"
        if self.stored.cancelled:
            return "cancelled"
        return "refused" if self.kind == "question" else "denied"

    def to_json(self) -> dict[str, Any]:
        """The request as the API shows it (and as its callback receives it)."""
        record, approval = self.stored.record, self.approval
        if isinstance(record.ask, QuestionAsk):
            return self._question_json(record.ask)
        request = approval.request if approval is not None else None
        decision = approval.decision if approval is not None else None
        return {
            "id": record.request_id,
            "kind": "approval",
            "status": self.status,
            "tool": record.ask.tool,
            "input": record.ask.input,
            "reason": record.ask.reason,
            "requester": record.ask.requester,
            "client": record.client,
            "channel": record.channel_id,
            "thread_ts": record.ask.thread_ts,
            "message_ts": request.message_ts if request is not None else None,
            "policy": request.policy.name if request is not None else None,
            "quorum": request.policy.quorum if request is not None else None,
            "votes": sorted(approval.votes) if approval is not None else [],
            "created_at": _iso(record.created_at),
            "expires_at": _iso(request.expires_at) if request is not None and request.expires_at else None,
            "callback_url": record.ask.callback_url,
            "decision": _decision_json(decision) if decision is not None else None,
            "respond": record.ask.respond,
            "answer": decision.answer if decision is not None and decision.decision == "answer" else None,
        }

    def _question_json(self, ask: QuestionAsk) -> dict[str, Any]:
        record, approval = self.stored.record, self.approval
        request = approval.request if approval is not None else None
        decision = approval.decision if approval is not None else None
        answered = decision if decision is not None and decision.decision == "answer" else None
        return {
            "id": record.request_id,
            "kind": "question",
            "status": self.status,
            "question": ask.question,
            "options": [option.model_dump() for option in ask.options] if ask.options is not None else None,
            "multiple": ask.multiple,
            "other": ask.other,
            "schema": ask.form_schema,
            "name": ask.name,
            "requester": ask.requester,
            "client": record.client,
            "channel": record.channel_id,
            "thread_ts": ask.thread_ts,
            "message_ts": request.message_ts if request is not None else None,
            "policy": request.policy.name if request is not None else None,
            "created_at": _iso(record.created_at),
            "expires_at": _iso(request.expires_at) if request is not None and request.expires_at else None,
            "callback_url": ask.callback_url,
            "answer": answered.answer if answered is not None else None,
            "answered_by": answered.decided_by if answered is not None else None,
            "answered_at": _iso(answered.decided_at) if answered is not None else None,
        }


def _decision_json(decision: Decision) -> dict[str, Any]:
    """The decision as the API shows it: ``approved_by`` names every approver counted, a single approval's too."""
    shown = decision.model_dump(mode="json")
    if decision.decision == "approve" and not decision.approved_by and decision.decided_by is not None:
        shown["approved_by"] = [decision.decided_by]
    return shown


def _iso(at: datetime) -> str:
    return at.isoformat()
