"""Deciding an approval: the checks a click or a typed reply must pass, then one atomic write.

Checks, in order: the approval exists; the attempt comes from the request's workspace and from
where the approval was shown (``bot.flow.access``); nobody decided it yet; the person is in the
request's channel (or was sent a direct-message copy); the person may decide under the policy
recorded on the request (approvers, user groups, no self-approval); a deny carries a reason
when the policy requires one. The requester may always deny their own request: that withdraws
it (only approving it needs someone else). Only then is the vote or decision written, with the
message update, the audit record, the schedule's cancellation and (if it closes the round) the
resume job in the same atomic step. Every refusal is audited and changes nothing.

With a quorum of N, approvals are votes until N distinct people approved; one deny ends it.
The clock decides too (expiry), without the human checks: ``expire``.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from slack_sdk.errors import SlackApiError

from bot.domain.clock import Clock, epoch_ms, system_clock
from bot.domain.policy import Policy, authorize
from bot.domain.records import Decision
from bot.domain.status import Status
from bot.flow.access import Origin, place_refusal
from bot.render.messages import is_blank
from bot.store.approvals import Approval, ApprovalStore
from bot.store.audit import Audit
from bot.store.directory import Directory
from bot.store.outbox import Outbox, update_approval

logger = logging.getLogger(__name__)

Kind = Literal["approve", "deny"]
_VOTE_RETRIES = 5
_EXPIRY_ACTOR = "signoff:expiry"


@dataclass(frozen=True)
class Outcome:
    """What happened to an attempt.

    Attributes:
        status: ``decided`` or ``vote`` when it was recorded; otherwise why not.
        decision: The decision that stands (this one, or an earlier one for ``already``).
        approvers_text: Who may decide (for refusals).
        approval: The approval, when it exists.
        votes: Approvals counted so far toward the quorum.
    """

    status: Status
    decision: Decision | None = None
    approvers_text: str = ""
    approval: Approval | None = None
    votes: int = 0


class DecisionService:
    """Applies decisions from buttons, modals, typed replies and the clock."""

    def __init__(
        self, *, approvals: ApprovalStore, directory: Directory, audit: Audit, clock: Clock = system_clock
    ) -> None:
        """Keep the collaborators."""
        self._approvals = approvals
        self._directory = directory
        self._audit = audit
        self._clock = clock

    def find(self, approval_id: str) -> Approval | None:
        """The approval behind a button, or ``None``."""
        return self._approvals.find(approval_id)

    def check(self, approval: Approval, *, user_id: str, kind: Kind, origin: Origin) -> Outcome | None:
        """``None`` if ``user_id`` may record ``kind`` on ``approval`` from ``origin`` now, else the refusal."""
        place = place_refusal(approval, user_id=user_id, origin=origin)
        if place is not None:
            refusal = Outcome(place, approval=approval)
        elif approval.decision is not None:
            return Outcome(Status.ALREADY, approval.decision, approval=approval)
        else:
            allowed, denied = self.may_decide(approval, user_id=user_id, kind=kind)
            if allowed:
                return None
            assert denied is not None
            refusal = denied
        self._audit_refusal(
            approval,
            user_id=user_id,
            refusal=refusal,
            origin=origin,
            channel_id=origin.channel_id,
            team_id=origin.user_team_id,
        )
        return refusal

    def may_discuss(self, approval: Approval, *, user_id: str, origin: Origin) -> Outcome | None:
        """``None`` if ``user_id`` may open a discussion from ``origin`` (anyone who could see it), else the refusal."""
        refusal: Outcome | None = None
        place = place_refusal(approval, user_id=user_id, origin=origin)
        if place is not None:
            refusal = Outcome(place, approval=approval)
        elif not self.may_see(approval, user_id=user_id):
            refusal = Outcome(Status.NOT_A_MEMBER, approval=approval)
        if refusal is not None:
            self._audit_refusal(approval, user_id=user_id, refusal=refusal, origin=origin, action="discuss")
        return refusal

    def _audit_refusal(
        self, approval: Approval, *, user_id: str, refusal: Outcome, origin: Origin, **details: str | None
    ) -> None:
        """One ``unauthorized`` audit event for a refused attempt on ``approval``."""
        self._audit.record(
            "unauthorized",
            session_id=approval.request.session_id,
            actor=user_id,
            approval_id=approval.request.approval_id,
            refusal=refusal.status,
            surface=origin.surface,
            **details,
        )

    def refuse(self, *, user_id: str, status: Status, **details: str) -> Outcome:
        """Audit a refusal that names no approval the bot can trust (e.g. a deny form it did not open)."""
        self._audit.record("unauthorized", actor=user_id, refusal=status, **details)
        return Outcome(status)

    def may_decide(self, approval: Approval, *, user_id: str, kind: Kind = "approve") -> tuple[bool, Outcome | None]:
        """Whether ``user_id`` may decide: in the request's channel and allowed by its policy (no audit: App Home)."""
        request = approval.request
        policy = Policy.from_summary(request.policy)
        try:
            if user_id not in approval.copies and not self._directory.in_channel(request.channel_id, user_id):
                return False, Outcome(Status.NOT_A_MEMBER, approval=approval)
            if kind == "deny" and user_id == request.requested_by:
                return True, None  # withdrawing one's own request
            members = self._directory.members(policy.usergroups)
        except SlackApiError as error:
            logger.warning("approval_id=<%s> | cannot resolve who may decide: %s", request.approval_id, error)
            return False, Outcome(Status.UNAVAILABLE, approval=approval)
        verdict = authorize(policy, user_id=user_id, requester_id=request.requested_by, group_members=members)
        if verdict.allowed:
            return True, None
        status = Status.SELF_APPROVAL if verdict.reason_code == "self_approval" else Status.NOT_AN_APPROVER
        return False, Outcome(status, approvers_text=verdict.approvers_text, approval=approval)

    def may_see(self, approval: Approval, *, user_id: str) -> bool:
        """Whether ``user_id`` could already see ``approval``: in its channel, or asked, decided or was sent it."""
        request, decision = approval.request, approval.decision
        involved = {request.requested_by, *approval.votes, *approval.copies}
        if decision is not None:
            involved.update({decision.decided_by or "", *decision.approved_by})
        if user_id in involved:
            return True
        try:
            return self._directory.in_channel(request.channel_id, user_id)
        except SlackApiError as error:
            logger.warning("approval_id=<%s> | cannot tell who is in its channel: %s", request.approval_id, error)
            return False

    def decide(
        self,
        approval_id: str,
        *,
        user_id: str,
        kind: Kind,
        reason: str | None,
        source: str,
        origin: Origin,
        written_at: str | None = None,
    ) -> Outcome:
        """Record ``kind`` by ``user_id`` on ``approval_id`` if every check passes.

        ``written_at``: the ts of the typed reply carrying the decision. It decides only if the
        approval message was posted at or before that ts (checked in the same atomic write), so
        a reply never decides a request raised after it was written (``unseen``).
        """
        for _ in range(_VOTE_RETRIES):
            approval = self.find(approval_id)
            if approval is None:
                return Outcome(Status.UNKNOWN)
            refusal = self.check(approval, user_id=user_id, kind=kind, origin=origin)
            if refusal is not None:
                return refusal
            # A reason made only of invisible characters says nothing: it is no reason (the policy may require one).
            text = None if reason is None or is_blank(reason) else reason.strip()
            if kind == "deny" and text is None and approval.request.policy.reason_required_on_deny:
                return Outcome(Status.REASON_REQUIRED, approval=approval)
            outcome = self._write(
                approval, kind=kind, user_id=user_id, reason=text, source=source, written_at=written_at
            )
            if outcome is not None:
                return outcome
        raise RuntimeError(f"approval_id=<{approval_id}> | votes kept changing; giving up after {_VOTE_RETRIES} tries")

    def expire(self, approval: Approval, *, outcome: Literal["deny", "approve"]) -> Outcome:
        """The clock's decision: ``expired`` (reported as such, never as a human denial) or an auto-approval."""
        if outcome == "deny":
            decision = Decision(decision="expired", decided_at=self._clock(), discussion=approval.discussion)
        else:
            decision = Decision(
                decision="approve",
                reason="approved automatically on expiry (low-risk)",
                decided_at=self._clock(),
                discussion=approval.discussion,
            )
        result = self._approvals.decide(
            approval,
            kind=decision.decision,
            user=_EXPIRY_ACTOR,
            quorum=1,
            decision=decision,
            update=self._update(approval),
            audit=self._audit_events(
                approval, _EXPIRY_ACTOR, approval_id=approval.request.approval_id, outcome=decision.decision
            ),
        )
        decided = result.status is Status.DECIDED
        return Outcome(Status.DECIDED if decided else Status.ALREADY, result.decision, approval=approval)

    def withdraw(self, approval: Approval, *, actor: str, reason: str) -> Outcome:
        """The asker takes a pending request back (the HTTP API's cancel): a deny with ``reason``, decided by nobody.

        A decision that stands is kept (``already``).
        """
        decision = Decision(decision="deny", reason=reason, decided_at=self._clock(), discussion=approval.discussion)
        details = {"approval_id": approval.request.approval_id, "decision": "deny", "reason": reason}
        result = self._approvals.decide(
            approval,
            kind="deny",
            user=actor,
            quorum=1,
            decision=decision,
            update=self._update(approval),
            audit=self._audit_events(approval, actor, source="withdrawal", **details),
        )
        decided = result.status is Status.DECIDED
        return Outcome(Status.DECIDED if decided else Status.ALREADY, result.decision, approval=approval)

    def claim(self, approval_id: str, *, user_id: str, origin: Origin) -> Outcome:
        """ "I'm looking": pause the escalation ladder for the policy's claim pause."""
        approval = self.find(approval_id)
        if approval is None:
            return Outcome(Status.UNKNOWN)
        pause = approval.request.policy.claim_pause_s
        if pause is None:
            return Outcome(Status.NO_CLAIMS, approval=approval)
        refusal = self.check(approval, user_id=user_id, kind="approve", origin=origin)
        if refusal is not None:
            return refusal
        until = self._clock() + timedelta(seconds=pause)
        result = self._approvals.claim(approval, user=user_id, until=until)
        if result is not Status.CLAIMED:
            return Outcome(Status.ALREADY if result is Status.ALREADY else Status.UNKNOWN, approval=approval)
        self._audit.record(
            "claim", session_id=approval.request.session_id, actor=user_id, approval_id=approval_id, until=until
        )
        return Outcome(Status.CLAIMED, approval=approval)

    def _write(
        self, approval: Approval, *, kind: Kind, user_id: str, reason: str | None, source: str, written_at: str | None
    ) -> Outcome | None:
        request = approval.request
        now = self._clock()
        approvers = tuple(sorted({*approval.votes, user_id})) if kind == "approve" and request.policy.quorum > 1 else ()
        decision = Decision(
            decision=kind,
            decided_by=user_id,
            approved_by=approvers,
            reason=reason,
            discussion=approval.discussion,
            decided_at=now,
        )
        result = self._approvals.decide(
            approval,
            kind=kind,
            user=user_id,
            quorum=request.policy.quorum,
            decision=decision,
            update=self._update(approval),
            audit=self._audit_events(
                approval, user_id, approval_id=request.approval_id, decision=kind, reason=reason, source=source
            ),
            written_at=written_at,
        )
        if result.status is Status.RETRY:
            return None
        if result.status is Status.NO_ROUND:
            logger.error("approval_id=<%s> | its round is gone; the decision was not recorded", request.approval_id)
            return Outcome(Status.UNKNOWN, approval=approval)
        if result.status is Status.VOTE:
            return Outcome(Status.VOTE, approval=approval, votes=result.votes)
        if result.status is Status.DECIDED:
            return Outcome(Status.DECIDED, decision, approval=approval)
        if result.status is Status.ALREADY:
            return Outcome(Status.ALREADY, result.decision, approval=approval)
        if result.status is Status.UNSEEN:
            return Outcome(Status.UNSEEN, approval=approval)
        return Outcome(Status.VOTED if result.status is Status.VOTED else Status.UNKNOWN, approval=approval)

    def _update(self, approval: Approval) -> str:
        """The message update a vote or decision queues in its atomic step."""
        entry = update_approval(approval.request.session_id, approval.request.approval_id)
        return Outbox.script_entry(entry, due_ms=epoch_ms(self._clock()))

    def _audit_events(self, approval: Approval, actor: str, **details: str | None) -> tuple[str, str]:
        """The audit events of a vote and of a decision on ``approval`` (the script writes the one that happens)."""
        session_id = approval.request.session_id
        vote = self._audit.script_event("vote", session_id=session_id, actor=actor, **details)
        decision = self._audit.script_event("decision", session_id=session_id, actor=actor, **details)
        return vote, decision
