"""Deciding an approval: the checks a click or a typed reply must pass, then one atomic write.

Checks, in order: the approval exists; the attempt comes from the request's workspace and from where the approval was
shown (``bot.flow.access``); nobody decided it yet; the action fits the request (an answer a question; a rule that
decides by itself, tier allow or deny, is decided by nobody); the person is in the request's channel (or was sent a
direct-message copy); the person may decide under the policy recorded on the request (approvers, user groups, no
self-approval); a deny carries a reason when the policy requires one. The requester may always deny their own request:
that withdraws it (only approving it needs someone else). Only then is the vote or decision written, with the message
update, the audit record, the schedule's cancellation and (if it closes the round) the resume job in the same atomic
step. Every refusal is audited and changes nothing.

One script judges them all (``bot.store.scripts.decide``), the one judge: a decision (``decide``) is judged and
written by it in one Redis round trip, unless a cache it reads is cold (then Slack is asked and the script runs again,
``bot.flow.judge``). What decides nothing (a claim, opening the deny, edit, answer or "allow similar" form, Discuss,
App Home) asks the same script as a check that writes nothing (``find_checked``, ``claim``, ``home``), read with
the approval in the same round trip. What an attempt comes to is an ``Outcome`` (``bot.flow.outcomes``).

With a quorum of N, approvals are votes until N distinct people approved; one deny ends it.
The clock decides too (expiry), without the human checks: ``expire``.
"""

import logging
from datetime import timedelta
from typing import Any, Literal

import redis

from bot.domain.clock import Clock, epoch_ms, system_clock
from bot.domain.hidden_characters import is_blank
from bot.domain.policy.policy_rules import Policy
from bot.domain.records import ApprovalRequest, Decision
from bot.domain.status import Status
from bot.flow.access import Origin
from bot.flow.home_checks import HomeChecks
from bot.flow.judge import Check, ScriptJudge, check_attempt
from bot.flow.outcomes import Kind, Outcome, Replay
from bot.observe import metrics, tracing
from bot.observe.logs import log_context
from bot.render.texts import decision_reasons
from bot.store.access.grants import GrantUse
from bot.store.approvals.approval_record import Approval
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.decide_call import Attempt, DecideResult
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, post_answer, update_approval
from bot.store.scripts import ScriptRecord
from bot.store.signatures import SeenSignatures
from bot.store.workspaces.directory import Directory

logger = logging.getLogger(__name__)


# Refusals audited as ``unauthorized``: the person may not act there (a repeat or a missing reason is not that).
_AUDITED = frozenset(
    {
        Status.WRONG_WORKSPACE,
        Status.WRONG_PLACE,
        Status.NOT_A_MEMBER,
        Status.UNAVAILABLE,
        Status.SELF_APPROVAL,
        Status.NOT_AN_APPROVER,
    }
)
_EXPIRY_ACTOR = "signoff:expiry"
RULE_ACTOR_PREFIX = "policy:"
"""The audit actor of a rule's own decision: ``policy:<rule name>``."""


def _filled_in_by_script(decision: Decision) -> dict[str, str | None]:
    """Audit details the decide script fills in for an approval: the input approved, its editor."""
    return {"input_digest": None, "edited_by": None} if decision.decision == "approve" else {}


class DecisionService:
    """Applies decisions from buttons, modals, typed replies and the clock."""

    def __init__(
        self,
        *,
        approvals: ApprovalStore,
        audit: Audit,
        signatures: SeenSignatures,
        directory: Directory,
        clock: Clock = system_clock,
    ) -> None:
        """Keep the collaborators; ``directory`` answers who may decide (user groups, channel members)."""
        self._approvals, self._audit = approvals, audit
        self._judge = ScriptJudge(approvals, directory, signatures)
        self._clock = clock
        self.home = HomeChecks(self._judge)
        """What App Home tabs may show (``bot.flow.home_checks``)."""

    def find(self, approval_id: str, *, session_id: str | None = None) -> Approval | None:
        """The approval behind a button, or ``None``; in ``session_id`` when the caller knows it (one look-up less)."""
        if session_id is not None:
            return self._approvals.get(session_id, approval_id)
        return self._approvals.find(approval_id)

    def find_checked(
        self,
        approval_id: str,
        *,
        user_id: str,
        action: Check,
        origin: Origin,
        session_id: str | None = None,
    ) -> tuple[Approval | None, Outcome | None]:
        """The approval behind a button (``None``: unknown) and, if found, why ``user_id`` may not ``action`` it now.

        Judged by the decide script without writing anything (a check: ``Attempt.check``), read with the approval in
        one round trip (one more to find its session, unless ``session_id`` names it); ``discuss``: anyone who could
        see it. ``None``: they may. A refusal other than a decision standing is audited.
        """
        approval, refusal = self._check_one(
            approval_id, user_id=user_id, action=action, origin=origin, session=session_id
        )
        if approval is not None and refusal is not None and refusal.status is not Status.ALREADY:
            details = {"action": "discuss"} if action == "discuss" else {}
            request = approval.request
            self._audit_refusal(request.session_id, request.approval_id, refusal.status, user_id, origin, **details)
        return approval, refusal

    def _check_one(
        self, approval_id: str, *, user_id: str, action: Check, origin: Origin, session: str | None
    ) -> tuple[Approval | None, Outcome | None]:
        """``find_checked`` without its audit."""
        session_id = session or self._approvals.session_of(approval_id)
        if session_id is None:
            return None, None
        attempt = check_attempt(session_id, approval_id, user_id=user_id, action=action, origin=origin)
        [found] = self._judge.checked([attempt])
        return (None, None) if found is None else (found[0], _refusal(*found))

    def _audit_refusal(
        self, session_id: str, approval_id: str, refusal: Status, user_id: str, origin: Origin, **details: str
    ) -> None:
        """One ``unauthorized`` audit event: ``user_id``'s attempt on the approval, from ``origin``, was refused."""
        self._audit.record(
            "unauthorized",
            session_id=session_id,
            actor=user_id,
            approval_id=approval_id,
            refusal=refusal,
            **origin.audit_details(),
            **details,
        )

    def refuse(self, *, user_id: str, status: Status, **details: str) -> Outcome:
        """Audit a refusal that names no approval the bot can trust (e.g. a deny form it did not open)."""
        self._audit.record("unauthorized", actor=user_id, refusal=status, **details)
        return Outcome(status)

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
        session_id: str | None = None,
        replay: Replay | None = None,
        with_request: bool = False,
        shown: str = "",
        quiet: bool = False,
        trust: bool = False,
        choices: tuple[int, ...] | None = None,
        filled_in: dict[str, Any] | None = None,
    ) -> Outcome:
        """Record ``kind`` by ``user_id`` on ``approval_id`` if every check passes: one round trip, the decide script.

        Args:
            approval_id: The approval (a button's value names it).
            user_id: Who decides.
            kind: ``approve`` or ``deny`` (an approval), ``answer`` (a question: ``invalid`` if blank).
            reason: The reason given, if any; for an answer, the answer (kept exactly as given).
            source: ``button``, ``modal`` or ``reply`` (audited).
            origin: Where the attempt comes from.
            written_at: The ts of the typed reply carrying the decision. It decides only if the approval message
                was posted at or before that ts (checked in the same atomic write), so a reply never decides a
                request raised after it was written (``unseen``).
            session_id: The approval's session, when the button says it (else it is looked up: one round trip more).
            replay: The signed request's signature: refused (``replayed``) if it was used before, recorded if not.
            with_request: Whether the outcome of a recorded decision carries its request (a refusal's or a vote's
                always does). A click has no use for it, and a request weighs what its tool's input weighs.
            shown: The digest of the input the person saw (an Approve button carries it). An approval of an input
                edited since it was shown (or, for a typed reply, of any edited input) is refused: ``changed``.
            quiet: A refusal is not audited (a reply that answers a question only if its writer is asked).
            trust: The approval also trusts the tool for the rest of the session; refused (``wrong_action``) unless the
                request offers it.
            choices: An answer that picks these options (indexes, from 0) of a question offering options: the script
                checks them against the question and records their labels; ``invalid`` if none.
            filled_in: An answer that fills in a question's form with this object (checked against its schema first).
        """
        if session_id is None:
            session_id = self._approvals.session_of(approval_id)
            if session_id is None:
                return Outcome(Status.UNKNOWN)
        # A reason made only of invisible characters says nothing: it is no reason (the policy may require one).
        text = None if reason is None or is_blank(reason) else reason.strip()
        answer_kind, given = _answer_given(reason, choices, filled_in)
        if kind == "answer" and ((answer_kind == "text" and text is None) or (choices is not None and not choices)):
            return Outcome(Status.INVALID)  # an empty answer tells the agent nothing: nothing is recorded
        team_id, channel_id = origin.place_of(session_id)
        attempt = Attempt(
            session_id=session_id,
            approval_id=approval_id,
            kind=kind,
            user=user_id,
            team_id=team_id,
            channel_id=channel_id,
            origin=origin.fields(),
            reason_given=text is not None,
            written_at=written_at or "",
            replay=replay.signature if replay is not None else None,
            replay_ttl_s=replay.remember_s if replay is not None else 0,
            with_request=with_request,
            shown=shown,
            trust=trust,
            answer_kind=answer_kind if kind == "answer" else "text",
            choices=tuple(sorted(choices or ())),  # the labels recorded follow the question's order
        )
        details: dict[str, Any]
        if kind == "answer":  # the agent reads the answer exactly as the person gave it (chosen: the script fills it)
            decision = Decision(decision=kind, decided_by=user_id, answer=given, decided_at=self._clock())
            details = {"approval_id": approval_id, "decision": kind, "answer": given, "source": source}
        else:
            decision = Decision(decision=kind, decided_by=user_id, reason=text, decided_at=self._clock(), trusted=trust)
            details = {"approval_id": approval_id, "decision": kind, "reason": text, "source": source}
            if trust:
                details["trusted"] = "the tool, for the rest of the session"
        details |= _filled_in_by_script(decision)
        result = self._attempt(attempt, decision, details)
        if result.status in _AUDITED and not quiet:
            self._audit_refusal(result.session_id, result.approval_id, result.status, user_id, origin)
        if result.status is Status.DECIDED:
            shown_s = _slack_ts_s(result.message_ts)
            waited_s = decision.decided_at.timestamp() - shown_s if shown_s is not None else None
            metrics.decided(outcome=kind, source=source, waited_s=waited_s)
        return self._outcome(result)

    def expire(
        self, approval: Approval, *, outcome: Literal["deny", "approve"], why: str | None = None, source: str = "expiry"
    ) -> Outcome:
        """The clock's decision: ``expired`` (reported as such, never as a human denial) or an auto-approval.

        ``why``: said with an expiry that is not the clock's (the app was uninstalled); ``source``: counted as.
        """
        if outcome == "deny":
            decision = Decision(decision="expired", reason=why, decided_at=self._clock())
        else:
            decision = Decision(
                decision="approve", reason=decision_reasons.APPROVED_ON_EXPIRY, decided_at=self._clock()
            )
        request = approval.request
        attempt = Attempt(
            session_id=request.session_id,
            approval_id=request.approval_id,
            kind=decision.decision,
            user=_EXPIRY_ACTOR,
            team_id=request.team_id,
            channel_id=request.channel_id,
            origin=None,
            quorum=1,
        )
        details = {"approval_id": request.approval_id, "outcome": decision.decision} | _filled_in_by_script(decision)
        result = self._attempt(attempt, decision, details, source=source, raised_in=approval.traceparent)
        decided = result.status is Status.DECIDED
        if decided:
            metrics.decided(outcome=decision.decision, source=source, waited_s=_waited_s(request, decision))
        return Outcome(Status.DECIDED if decided else Status.ALREADY, approval=approval, recorded=result)

    def by_rule_in(self, pipeline: redis.client.Pipeline, request: ApprovalRequest) -> None:
        """Queue in ``pipeline`` the decision of a request whose rule decides by itself (tier allow or deny).

        Written in the transaction that opens the request, after it: no moment exists in which a person could
        decide a call the rule refuses, and a worker dying in between leaves nothing half done. The audit actor
        is ``policy:<rule>``; the decision names the rule, and nobody as its decider.
        """
        policy = request.policy
        kind: Kind = "approve" if policy.tier == "allow" else "deny"
        reason = None if kind == "approve" else policy.message
        decision = Decision(decision=kind, reason=reason, decided_at=self._clock(), by_rule=policy.name)
        details = {"reason": reason, "source": "policy", "rule": policy.name}
        self._decided_in(pipeline, request, decision, actor=f"{RULE_ACTOR_PREFIX}{policy.name}", details=details)

    def by_grant_in(self, pipeline: redis.client.Pipeline, request: ApprovalRequest, use: GrantUse) -> None:
        """Queue in ``pipeline`` the approval of a request a standing approval covers (``GrantStore.use`` found it).

        It is decided by the person who made the grant, and audited with source ``grant``, in the transaction that opens
        it; unless a revoke fenced the use first, or the use is too old (``GrantUse.decides_until_ms``): then the
        script answers ``revoked`` (or ``too_late``), writes nothing, and the request waits for people.
        """
        grant = use.grant
        decision = Decision(
            decision="approve", decided_by=grant.granted_by, decided_at=self._clock(), by_grant=grant.grant_id
        )
        details = {"reason": None, "source": "grant", "grant": grant.grant_id, "rule": grant.rule}
        self._decided_in(pipeline, request, decision, actor=grant.granted_by, details=details, use=use)

    def _decided_in(
        self,
        pipeline: redis.client.Pipeline,
        request: ApprovalRequest,
        decision: Decision,
        *,
        actor: str,
        details: dict[str, str | None],
        use: GrantUse | None = None,
    ) -> None:
        kind: Kind = "approve" if decision.decision == "approve" else "deny"
        attempt = Attempt(
            session_id=request.session_id,
            approval_id=request.approval_id,
            kind=kind,
            user=actor,
            team_id=request.team_id,
            channel_id=request.channel_id,
            origin=None,  # no person acts now: what decides was settled before (a rule, a grant)
            quorum=1,
            grant=use.grant.grant_id if use is not None else "",
        )
        update = Outbox.script_entry(
            update_approval(request.session_id, request.approval_id), due_ms=epoch_ms(self._clock())
        )
        details |= _filled_in_by_script(decision)
        audit = self._audit_events(request.session_id, actor, approval_id=request.approval_id, decision=kind, **details)
        by_ms = use.decides_until_ms if use is not None else 0
        self._approvals.decide_in(pipeline, attempt, decision=decision, update=update, audit=audit, answer_by_ms=by_ms)

    def withdraw(self, approval: Approval, *, actor: str, reason: str) -> Outcome:
        """The asker takes a pending request back (the HTTP API's cancel): a deny with ``reason``, decided by nobody.

        A decision that stands is kept (``already``).
        """
        decision = Decision(decision="deny", reason=reason, decided_at=self._clock())
        request = approval.request
        attempt = Attempt(
            session_id=request.session_id,
            approval_id=request.approval_id,
            kind="deny",
            user=actor,
            team_id=request.team_id,
            channel_id=request.channel_id,
            origin=None,  # the API checked the asker; no person's rights in Slack apply
            quorum=1,
        )
        details: dict[str, str | None] = {
            "approval_id": request.approval_id,
            "decision": "deny",
            "reason": reason,
            "source": "withdrawal",
        }
        result = self._attempt(attempt, decision, details, raised_in=approval.traceparent)
        decided = result.status is Status.DECIDED
        if decided:
            metrics.decided(outcome="deny", source="withdrawal", waited_s=_waited_s(request, decision))
        return Outcome(Status.DECIDED if decided else Status.ALREADY, approval=approval, recorded=result)

    def claim(self, approval_id: str, *, user_id: str, origin: Origin, session_id: str | None = None) -> Outcome:
        """Pause the escalation ladder for the policy's claim pause ("I'm looking"), if ``user_id`` may approve it.

        ``session_id``: the approval's session, when the button names it (else it is looked up: one round trip more).
        """
        approval, refusal = self._check_one(
            approval_id, user_id=user_id, action="approve", origin=origin, session=session_id
        )
        if approval is None:
            return Outcome(Status.UNKNOWN)
        pause = approval.request.policy.claim_pause_s
        if pause is None:
            return Outcome(Status.NO_CLAIMS, approval=approval)
        if refusal is not None:
            if refusal.status is not Status.ALREADY:
                request = approval.request
                self._audit_refusal(request.session_id, request.approval_id, refusal.status, user_id, origin)
            return refusal
        until = self._clock() + timedelta(seconds=pause)
        result = self._approvals.claim(approval, user=user_id, until=until)
        if result is not Status.CLAIMED:
            return Outcome(Status.ALREADY if result is Status.ALREADY else Status.UNKNOWN, approval=approval)
        self._audit.record(
            "claim", session_id=approval.request.session_id, actor=user_id, approval_id=approval_id, until=until
        )
        return Outcome(Status.CLAIMED, approval=approval)

    def _attempt(
        self,
        attempt: Attempt,
        decision: Decision,
        details: dict[str, Any],
        *,
        source: str | None = None,
        raised_in: str | None = None,
    ) -> DecideResult:
        """Run the decide script (every line logged meanwhile names the approval and its session).

        ``source`` is what decides (else the one ``details`` names). In a span continuing ``raised_in``, the trace
        of the run that raised the approval (when the caller has not read the approval, it is read first, only
        while traces are recorded): the message update and the resume job the script queues continue the decision's.
        """
        if raised_in is None:
            raised_in = (
                self._approvals.traceparent_of(attempt.session_id, attempt.approval_id) if tracing.enabled() else ""
            )
        source = source or details.get("source") or "expiry"
        attributes = {"signoff.approval.id": attempt.approval_id, "signoff.decision.source": source}
        with (
            log_context(session_id=attempt.session_id, approval_id=attempt.approval_id),
            tracing.span(f"decide {attempt.kind}", parent=raised_in, attributes=attributes) as span,
        ):
            result = self._decide_script(attempt, decision, details, in_thread_already=source == "reply")
            span.set_attribute("signoff.decision.status", result.status.value)
            if result.status is Status.DECIDED:
                logger.info("approval_id=<%s> | decided: %s (%s)", attempt.approval_id, decision.decision, source)
            return result

    def _decide_script(
        self, attempt: Attempt, decision: Decision, details: dict[str, Any], *, in_thread_already: bool
    ) -> DecideResult:
        """Run the decide script, supplying what it says it needs first (a cold cache, the request's place).

        ``in_thread_already``: the answer is a typed reply, so the thread shows it already (no second post).
        """
        # Built once: a run that answers ``needs`` writes nothing, so the next run may queue the same records.
        due_ms = epoch_ms(self._clock())
        update = Outbox.script_entry(update_approval(attempt.session_id, attempt.approval_id), due_ms=due_ms)
        if attempt.kind == "answer" and not in_thread_already:  # posted in the thread: queued once, with the answer
            update += Outbox.script_entry(post_answer(attempt.session_id, attempt.approval_id), due_ms=due_ms)
        audit = self._audit_events(attempt.session_id, attempt.user, **details)
        return self._judge.judge(attempt, decision=decision, update=update, audit=audit)

    def _outcome(self, result: DecideResult) -> Outcome:
        """What a decide script's answer means to the person."""
        if result.status is Status.NO_ROUND:
            logger.error("approval_id=<%s> | its round is gone; the decision was not recorded", result.approval_id)
            return Outcome(Status.UNKNOWN, recorded=result)
        if result.status in (Status.SELF_APPROVAL, Status.NOT_AN_APPROVER) and result.request is not None:
            approvers = Policy.from_summary(result.request.policy).approvers_text()
            return Outcome(result.status, approvers_text=approvers, recorded=result)
        return Outcome(result.status, votes=result.votes, recorded=result)

    def _audit_events(self, session_id: str, actor: str, **details: Any) -> tuple[ScriptRecord, ...]:
        """The audit events of a vote and of a decision (the script writes the one that happens)."""
        return self._audit.script_events(("vote", "decision"), session_id=session_id, actor=actor, **details)


def _answer_given(
    reason: str | None, choices: tuple[int, ...] | None, filled_in: dict[str, Any] | None
) -> tuple[str, str | dict[str, Any] | None]:
    """How an answer answers (``text``, ``choice``, ``form``) and what it records before the script fills it in."""
    if choices is not None:
        return "choice", None
    if filled_in is not None:
        return "form", filled_in
    return "text", reason


def _slack_ts_s(ts: str) -> float | None:
    """A Slack message ts as unix seconds (when its message was posted), or ``None``."""
    try:
        return float(ts) if ts else None
    except ValueError:
        return None


def _waited_s(request: ApprovalRequest, decision: Decision) -> float:
    return (decision.decided_at - request.created_at).total_seconds()


def _refusal(approval: Approval, status: Status) -> Outcome | None:
    """What a check's answer means: ``None`` (allowed) or the refusal, naming who may decide where it says no."""
    if status is Status.ALLOWED:
        return None
    if status in (Status.SELF_APPROVAL, Status.NOT_AN_APPROVER):
        approvers = Policy.from_summary(approval.request.policy).approvers_text()
        return Outcome(status, approvers_text=approvers, approval=approval)
    return Outcome(status, approval=approval)
