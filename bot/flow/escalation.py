"""Pending requests must not rot: reminders, the escalation ladder, and expiry, on a due queue.

When a round opens, each request's schedule is planned in the same transaction: a reminder, the
ladder's first rung and the expiry, each an entry keyed ``<approval id>:<kind>`` in a Redis
sorted set of due times (``bot.store.due``). Any number of workers tick; each due entry is taken by
exactly one; a tick reads only what is due. A decision deletes the three entries in its own
atomic step, so nothing fires after it. A claim pushes the next rung back by the claim's pause.
"""

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Literal

import redis

from bot.domain.clock import Clock, epoch_ms, system_clock
from bot.domain.oncall import on_call
from bot.domain.policy import PolicyBook
from bot.domain.records import ApprovalRequest
from bot.flow.decisions import DecisionService
from bot.render import messages
from bot.store import keys
from bot.store.approvals import Approval, ApprovalStore
from bot.store.audit import Audit
from bot.store.due import DueQueue
from bot.store.outbox import Outbox, OutboxEntry

logger = logging.getLogger(__name__)

ScheduleKind = Literal["remind", "escalate", "expire"]
_LEASE_S: Final = 60

# KEYS: approval hash, schedule due, schedule entries. ARGV: entry id, entry JSON, due ms.
# Reschedules a step unless a decision landed meanwhile (the decision deleted the entry; a step
# fired concurrently must not bring it back).
_AGAIN_IF_OPEN: Final = """
if redis.call('HEXISTS', KEYS[1], 'decision') == 1 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
  return 0
end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
"""


@dataclass(frozen=True)
class Due:
    """One scheduled step of one request."""

    session_id: str
    approval_id: str
    kind: ScheduleKind
    step: int = 0

    @property
    def entry_id(self) -> str:
        """Deterministic, so a decision can delete it without reading it."""
        return f"{self.approval_id}:{self.kind}"

    def to_json(self) -> str:
        """Serialize for Redis."""
        return json.dumps(
            {"session_id": self.session_id, "approval_id": self.approval_id, "kind": self.kind, "step": self.step}
        )

    @classmethod
    def from_json(cls, text: str) -> "Due":
        """Restore from Redis."""
        data = json.loads(text)
        return cls(data["session_id"], data["approval_id"], data["kind"], int(data["step"]))


class Schedule:
    """The due queue of reminders, escalations and expiries."""

    def __init__(self, client: redis.Redis, *, clock: Clock = system_clock) -> None:
        """Share ``clock`` with the rest of the bot so tests and the sandbox can move time."""
        self._clock = clock
        self._again = client.register_script(_AGAIN_IF_OPEN)
        self._queue = DueQueue(
            client, due_key=keys.SCHEDULE_DUE, entries_key=keys.SCHEDULE_ENTRIES, now_ms=lambda: epoch_ms(clock())
        )

    def plan(self, pipeline: redis.client.Pipeline, request: ApprovalRequest) -> None:
        """Queue a new request's first reminder, first rung and expiry (inside the caller's transaction)."""
        policy = request.policy
        first: dict[ScheduleKind, int | None] = {
            "remind": policy.remind_every_s,
            "escalate": policy.levels[0].after_s if policy.levels else None,
            "expire": policy.expire_after_s,
        }
        for kind, after_s in first.items():
            if after_s:
                due = Due(request.session_id, request.approval_id, kind)
                at = request.created_at + timedelta(seconds=after_s)
                self._queue.add(pipeline, due.entry_id, due.to_json(), due_ms=epoch_ms(at))

    def take(self, *, limit: int) -> list[Due]:
        """Claim what is due (each entry goes to exactly one caller)."""
        return [Due.from_json(text) for _entry_id, text in self._queue.claim(lease_s=_LEASE_S, limit=limit)]

    def done(self, due: Due) -> None:
        """Nothing more to do for this entry."""
        self._queue.complete(due.entry_id)

    def again(self, due: Due, *, at: datetime) -> bool:
        """Run ``due`` (possibly a later step) at ``at``, unless its request was decided meanwhile."""
        keys_ = [keys.approval(due.session_id, due.approval_id), keys.SCHEDULE_DUE, keys.SCHEDULE_ENTRIES]
        return bool(self._again(keys=keys_, args=[due.entry_id, due.to_json(), epoch_ms(at)]))

    def pending(self) -> int:
        """Entries waiting, due or not."""
        return self._queue.pending()


class Escalator:
    """Fires due reminders, escalation rungs and expiries."""

    def __init__(
        self,
        *,
        schedule: Schedule,
        approvals: ApprovalStore,
        decisions: DecisionService,
        outbox: Outbox,
        policies: PolicyBook,
        audit: Audit,
        clock: Clock = system_clock,
    ) -> None:
        """Keep the collaborators."""
        self._schedule = schedule
        self._approvals = approvals
        self._decisions = decisions
        self._outbox = outbox
        self._policies = policies
        self._audit = audit
        self._clock = clock

    def tick(self, *, limit: int = 100) -> int:
        """Fire what is due; return how many entries were handled."""
        taken = self._schedule.take(limit=limit)
        for due in taken:
            try:
                self.fire(due)
            except Exception:
                logger.exception("entry=<%s> | scheduled step failed; it comes back after its lease", due.entry_id)
        return len(taken)

    def fire(self, due: Due) -> None:
        """Do one scheduled step (a decided or vanished request just drops it)."""
        approval = self._approvals.get_readable(due.session_id, due.approval_id)
        if approval is None or approval.decision is not None:
            self._schedule.done(due)
            return
        if due.kind == "remind":
            self._remind(due, approval)
        elif due.kind == "escalate":
            self._escalate(due, approval)
        else:
            self._expire(due, approval)

    def _remind(self, due: Due, approval: Approval) -> None:
        request = approval.request
        self._post(request, messages.reminder(request, waited=self._waited(request)))
        self._audit.record("reminder", session_id=request.session_id, approval_id=request.approval_id)
        every = request.policy.remind_every_s or 0
        self._schedule.again(due, at=self._clock() + timedelta(seconds=every))

    def _escalate(self, due: Due, approval: Approval) -> None:
        request = approval.request
        now = self._clock()
        if approval.claimed_until_ms is not None and approval.claimed_until_ms > epoch_ms(now):
            self._schedule.again(due, at=datetime.fromtimestamp(approval.claimed_until_ms / 1000, now.tzinfo))
            return
        levels = request.policy.levels
        level = levels[due.step % len(levels)]
        on_call_user = None
        if level.rotation is not None and level.rotation in self._policies.rotations:
            on_call_user = on_call(self._policies.rotations[level.rotation], now)
        users = tuple(dict.fromkeys((*level.users, *((on_call_user,) if on_call_user else ()))))
        number = due.step % len(levels) + 1
        self._post(
            request,
            messages.escalation(
                request, level=number, users=users, usergroups=level.usergroups, waited=self._waited(request)
            ),
        )
        if on_call_user is not None:
            payload = {"session_id": request.session_id, "approval_id": request.approval_id, "user": on_call_user}
            self._outbox.send_later(OutboxEntry("post_approval_copy", payload))
        self._approvals.set_level(request.session_id, request.approval_id, number)
        self._audit.record(
            "escalation",
            session_id=request.session_id,
            approval_id=request.approval_id,
            level=number,
            users=users,
            usergroups=level.usergroups,
            on_call=on_call_user,
        )
        next_step = due.step + 1
        if next_step < len(levels) * (request.policy.repeat + 1):
            after = levels[next_step % len(levels)].after_s
            self._schedule.again(
                Due(due.session_id, due.approval_id, "escalate", next_step), at=now + timedelta(seconds=after)
            )
        else:
            self._schedule.done(due)

    def _expire(self, due: Due, approval: Approval) -> None:
        request = approval.request
        outcome = request.policy.expiry_outcome
        if outcome == "keep":
            self._post(request, messages.expired_kept())
            self._audit.record("expiry", session_id=request.session_id, approval_id=request.approval_id, outcome="keep")
            self._schedule.done(due)
            return
        result = self._decisions.expire(approval, outcome="approve" if outcome == "approve" else "deny")
        self._audit.record(
            "expiry",
            session_id=request.session_id,
            approval_id=request.approval_id,
            outcome=outcome,
            result=result.status,
        )
        self._schedule.done(due)

    def _post(self, request: ApprovalRequest, text: str) -> None:
        payload = {"channel": request.channel_id, "thread_ts": request.thread_ts, "text": text}
        self._outbox.send_later(OutboxEntry("post_message", payload))

    def _waited(self, request: ApprovalRequest) -> timedelta:
        return self._clock() - request.created_at
