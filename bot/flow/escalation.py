"""Pending requests must not rot: reminders, the escalation ladder, and expiry, on a due queue.

When a round opens, each request's schedule is planned in the same transaction: a reminder, the
ladder's first rung and the expiry, each an entry keyed ``<approval id>:<kind>`` in a Redis
sorted set of due times (``bot.store.queues.due``). Any number of workers tick; each due entry is taken by
exactly one; a tick reads only what is due. A decision deletes the three entries in its own
atomic step, so nothing fires after it. A claim pushes the next rung back by the claim's pause.

A tick works in batches, three round trips whatever is due: claim the due entries, read their
approvals (one pipeline), then write every step (one pipeline of fenced writes: its posts, audit
record, level and next step). Each step's writes are atomic and apply only while this tick's claim
still holds the entry, so a step overtaken by a decision, a claim pause, or another worker whose
claim followed an expired lease writes nothing; a worker that dies before writing loses nothing,
the entry comes back when its lease runs out. Only an expiry that decides costs one more round
trip (the decision itself).
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.domain.clock import epoch_ms
from bot.domain.policy.oncall import on_call
from bot.domain.policy.policy import PolicyBook
from bot.domain.records import ApprovalRequest
from bot.flow.base import Flow
from bot.observe import metrics, tracing
from bot.render.texts import thread_posts
from bot.store import keys
from bot.store.approvals.approval_record import Approval
from bot.store.approvals.approvals import ApprovalStore
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, post_approval_copy, post_message
from bot.store.queues.schedule import Due, Schedule, Step

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Escalator(Flow):
    """Fires due reminders, escalation rungs and expiries."""

    approvals: ApprovalStore
    schedule: Schedule
    outbox: Outbox
    audit: Audit
    policies: PolicyBook

    def tick(self, *, limit: int = 100) -> int:
        """Fire what is due, in batches; return how many entries were handled."""
        steps = self.schedule.take(limit=limit)
        if not steps:
            return 0
        approvals = self.approvals.get_many_readable([(step.due.session_id, step.due.approval_id) for step in steps])
        planned: list[Step] = []
        fired: set[int] = set()
        for step, approval in zip(steps, approvals, strict=True):
            if approval is not None and approval.decision is None:
                fired.add(id(step))  # a step on a decided or vanished request is only dropped
            try:
                self.plan(step, approval)
            except Exception:  # boundary: one step's bug must not hold up the batch
                logger.exception("entry=<%s> | scheduled step failed; it comes back after its lease", step.due.entry_id)
                continue
            planned.append(step)
        for step, applied in zip(planned, self.schedule.apply(planned), strict=True):
            if not applied:
                logger.info("entry=<%s> | step not written: decided, paused or taken over meanwhile", step.due.entry_id)
            elif id(step) in fired:
                metrics.ESCALATION_STEPS.labels(kind=step.due.kind).inc()
        return len(steps)

    def plan(self, step: Step, approval: Approval | None) -> None:
        """Put one scheduled step's writes on ``step`` (a decided or vanished request just drops it)."""
        if approval is None or approval.decision is not None:
            self.schedule.done(step)
            return
        request = approval.request
        # In the trace of the run that raised the request: its reminder, escalation or expiry posts continue it.
        kind = tracing.name_part(step.due.kind, keys.SCHEDULE_KINDS)
        with tracing.span(
            f"schedule {kind}", parent=approval.traceparent, attributes={"signoff.approval.id": request.approval_id}
        ):
            if step.due.kind == "remind":
                self._remind(step, approval)
            elif step.due.kind == "escalate":
                self._escalate(step, approval)
            else:
                self._expire(step, approval)

    def _remind(self, step: Step, approval: Approval) -> None:
        request = approval.request
        self._post(step, request, thread_posts.reminder(request, waited=self._waited(request)))
        self._audit(step, "reminder", request)
        every = request.policy.remind_every_s or 0
        self.schedule.again(step, step.due, at=self.clock() + timedelta(seconds=every))

    def _escalate(self, step: Step, approval: Approval) -> None:
        due, request = step.due, approval.request
        now = self.clock()
        if approval.claimed_until_ms is not None and approval.claimed_until_ms > epoch_ms(now):
            self.schedule.again(step, due, at=datetime.fromtimestamp(approval.claimed_until_ms / 1000, now.tzinfo))
            return
        levels = request.policy.levels
        level = levels[due.step % len(levels)]
        on_call_user = None
        if level.rotation is not None and level.rotation in self.policies.rotations:
            on_call_user = on_call(self.policies.rotations[level.rotation], now)
        users = tuple(dict.fromkeys((*level.users, *((on_call_user,) if on_call_user else ()))))
        number = due.step % len(levels) + 1
        self._post(
            step,
            request,
            thread_posts.escalation(
                request, level=number, users=users, usergroups=level.usergroups, waited=self._waited(request)
            ),
        )
        if on_call_user is not None:
            copy = post_approval_copy(request.session_id, request.approval_id, user=on_call_user)
            self.outbox.add(step.writes, copy)
        self.approvals.set_level(request.session_id, request.approval_id, number, target=step.writes)
        self._audit(
            step,
            "escalation",
            request,
            level=number,
            users=users,
            usergroups=level.usergroups,
            on_call=on_call_user,
        )
        next_step = due.step + 1
        if next_step < len(levels) * (request.policy.repeat + 1):
            after = levels[next_step % len(levels)].after_s
            following = Due(due.session_id, due.approval_id, "escalate", next_step)
            self.schedule.again(step, following, at=now + timedelta(seconds=after))
        else:
            self.schedule.done(step)

    def _expire(self, step: Step, approval: Approval) -> None:
        request = approval.request
        outcome = request.policy.expiry_outcome
        if outcome == "keep":
            self._post(step, request, thread_posts.expired_kept())
            self._audit(step, "expiry", request, outcome="keep")
            self.schedule.done(step)
            return
        # The decision (its own atomic step, first one wins) deletes the request's entries: the
        # audit record that follows it must not depend on the claim any more.
        result = self.decisions.expire(approval, outcome="approve" if outcome == "approve" else "deny")
        step.writes.drop_fence()
        self._audit(step, "expiry", request, outcome=outcome, result=result.status)
        self.schedule.done(step)

    def _audit(self, step: Step, event: str, request: ApprovalRequest, **details: Any) -> None:
        """Audit ``event`` about ``request`` in the step's writes."""
        self.audit.add(step.writes, event, session_id=request.session_id, approval_id=request.approval_id, **details)

    def _post(self, step: Step, request: ApprovalRequest, text: str) -> None:
        # A request the API posted outside any thread gets its reminders under its own message, not loose
        # in the channel where nothing says which request they are about.
        thread_ts = request.thread_ts or request.message_ts
        post = post_message(
            request.channel_id, text, team_id=request.team_id, thread_ts=thread_ts, session_id=request.session_id
        )
        self.outbox.add(step.writes, post)

    def _waited(self, request: ApprovalRequest) -> timedelta:
        return self.clock() - request.created_at
