"""Deciding an approval: the checks a click or a typed reply must pass, then one atomic write.

Checks, in order: the approval exists; nobody decided it yet; the person may decide under the
policy recorded on the request (approvers, user groups, no self-approval); a deny carries a
reason when the policy requires one. Only then is the decision written, with the message
update (and, if it closes the round, the resume job) in the same atomic step.
Every refusal is audited and changes nothing.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from slack_sdk.errors import SlackApiError

from bot.approvals import Approval, ApprovalStore
from bot.audit import Audit
from bot.directory import Directory
from bot.model import Decision
from bot.outbox import OutboxEntry
from bot.policy import Policy, authorize

logger = logging.getLogger(__name__)

Kind = Literal["approve", "deny"]
Status = Literal["decided", "already", "unknown", "not_an_approver", "self_approval", "reason_required", "unavailable"]


@dataclass(frozen=True)
class Outcome:
    """What happened to a decision attempt.

    Attributes:
        status: ``decided`` when this attempt was recorded; otherwise why not.
        decision: The decision that stands (this one, or an earlier one for ``already``).
        approvers_text: Who may decide (for refusals).
        approval: The approval, when it exists.
    """

    status: Status
    decision: Decision | None = None
    approvers_text: str = ""
    approval: Approval | None = None


class DecisionService:
    """Applies decisions from buttons, modals and typed replies."""

    def __init__(
        self,
        *,
        approvals: ApprovalStore,
        directory: Directory,
        audit: Audit,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        """Keep the collaborators."""
        self._approvals = approvals
        self._directory = directory
        self._audit = audit
        self._clock = clock

    def find(self, approval_id: str) -> Approval | None:
        """The approval behind a button, or ``None``."""
        session_id = self._approvals.session_of(approval_id)
        return self._approvals.get(session_id, approval_id) if session_id is not None else None

    def check(self, approval: Approval, *, user_id: str) -> Outcome | None:
        """``None`` if ``user_id`` may decide ``approval`` now, else the refusal."""
        if approval.decision is not None:
            return Outcome("already", approval.decision, approval=approval)
        policy = Policy.from_summary(approval.request.policy)
        try:
            members = self._directory.members(policy.approvers.usergroups)
        except SlackApiError as error:
            logger.warning("approval_id=<%s> | cannot resolve user groups: %s", approval.request.approval_id, error)
            return Outcome("unavailable", approval=approval)
        verdict = authorize(policy, user_id=user_id, requester_id=approval.request.requested_by, group_members=members)
        if verdict.allowed:
            return None
        self._audit.record(
            "unauthorized",
            session_id=approval.request.session_id,
            actor=user_id,
            approval_id=approval.request.approval_id,
            refusal=verdict.reason_code,
        )
        status: Status = "self_approval" if verdict.reason_code == "self_approval" else "not_an_approver"
        return Outcome(status, approvers_text=verdict.approvers_text, approval=approval)

    def decide(self, approval_id: str, *, user_id: str, kind: Kind, reason: str | None, source: str) -> Outcome:
        """Record ``kind`` by ``user_id`` on ``approval_id`` if every check passes."""
        approval = self.find(approval_id)
        if approval is None:
            return Outcome("unknown")
        refusal = self.check(approval, user_id=user_id)
        if refusal is not None:
            return refusal
        reason = (reason or "").strip() or None
        request = approval.request
        if kind == "deny" and reason is None and request.policy.reason_required_on_deny:
            return Outcome("reason_required", approval=approval)
        now = self._clock()
        decision = Decision(
            decision=kind,
            decided_by=user_id,
            reason=reason,
            discussion=approval.discussion,
            decided_at=now,
        )
        update = OutboxEntry("update_approval", {"session_id": request.session_id, "approval_id": approval_id})
        audit = self._audit.fields(
            "decision",
            session_id=request.session_id,
            actor=user_id,
            approval_id=approval_id,
            decision=kind,
            reason=reason,
            source=source,
        )
        result = self._approvals.decide(
            request.session_id, approval_id, decision, update=update, audit=audit, now_ms=int(now.timestamp() * 1000)
        )
        if result.status == "already":
            return Outcome("already", result.decision, approval=approval)
        if result.status == "unknown":
            return Outcome("unknown")
        return Outcome("decided", decision, approval=approval)
