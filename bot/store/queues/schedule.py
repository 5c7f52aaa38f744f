"""The schedule of pending requests: reminders, escalation rungs and expiries on a due queue per shard.

Each request's steps are entries keyed ``<approval id>:<kind>`` in a sorted set of due times
(``bot.store.queues.due``); ``bot.flow.escalation`` decides what firing one writes.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Literal

import redis

from bot.domain.clock import Clock, epoch_ms, system_clock
from bot.domain.records import ApprovalRequest
from bot.store import keys
from bot.store.queues.due import DueQueue, FencedWrites, lease_each
from bot.store.queues.shard_trouble import ShardRests

ScheduleKind = Literal["remind", "escalate", "expire"]


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
        return keys.schedule_entry(self.approval_id, self.kind)

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


@dataclass(frozen=True)
class Step:
    """A claimed entry and what firing it writes: applied at once, and only while the claim holds."""

    due: Due
    writes: FencedWrites


class Schedule:
    """The due queue of reminders, escalations and expiries."""

    lease_s: Final = 60
    """How long a taken step is the taker's: one that dies before writing it loses nothing, the step comes back."""

    def __init__(self, client: redis.Redis, *, clock: Clock = system_clock) -> None:
        """Share ``clock`` with the rest of the bot so tests and the sandbox can move time."""
        self._clock = clock
        self._client = client
        self._queues = DueQueue.per_shard(
            client,
            due_key=keys.schedule_due,
            entries_key=keys.schedule_steps,
            now_ms=lambda: epoch_ms(clock()),
            name="schedule",
        )
        self.rests = ShardRests()  # a cluster's master in trouble: its shard is skipped a moment

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
                self._queue_of(due).add(pipeline, due.entry_id, due.to_json(), due_ms=epoch_ms(at))

    def _queue_of(self, due: Due) -> DueQueue:
        """The due queue of the shard of ``due``'s session (its steps write with the session's records)."""
        return self._queues[keys.shard_of(due.session_id)]

    def take(self, *, limit: int) -> list["Step"]:
        """Claim what is due on every shard, up to ``limit`` each, as steps to write with ``apply``.

        Each entry goes to one caller.
        """
        leases = lease_each(self._client, self._queues, lease_s=self.lease_s, limit=limit, rests=self.rests)
        return [
            Step(Due.from_json(text), queue.fenced(entry_id, lease_until_ms=leased.until_ms))
            for queue, leased in zip(self._queues, leases, strict=True)
            for entry_id, text in leased.entries
        ]

    def done(self, step: "Step") -> None:
        """Nothing more to do for the step's entry (written with the step)."""
        self._queue_of(step.due).remove(step.writes, step.due.entry_id)

    def again(self, step: "Step", due: Due, *, at: datetime) -> None:
        """Run ``due`` (the step's entry, possibly a later step) at ``at`` (written with the step)."""
        self._queue_of(due).add(step.writes, due.entry_id, due.to_json(), due_ms=epoch_ms(at))

    def apply(self, steps: Sequence["Step"]) -> list[bool]:
        """Write every step in one round trip; per step, whether it applied (its claim still held).

        Any shard's queue applies them all: each step's writes name their own keys (one slot each).
        """
        return self._queues[0].apply([step.writes for step in steps]) if steps else []

    def pending(self) -> int:
        """Entries waiting, due or not, on every shard."""
        return sum(queue.pending() for queue in self._queues)
