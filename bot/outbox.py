"""The outbox: Slack calls the bot owes, kept in Redis until Slack has taken them.

Entries are queued in the same transaction as the change that makes them due (an approval
round, a decision), so a crash or a Slack outage never loses one. A dispatcher claims due
entries with a lease (``bot.due``: a dispatcher that dies releases them when the lease runs
out), sends them, and completes or reschedules them: with exponential backoff, or after
``Retry-After`` on a 429. Delivery is at-least-once; senders make repeats harmless where Slack
allows it.
"""

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import redis

from bot import keys
from bot.due import DueQueue

_WAKE_TOKENS_KEPT: Final = 64


def _ordered_id() -> str:
    # Entries due at the same millisecond are claimed in id order (ZRANGEBYSCORE breaks ties by
    # member): a time-ordered id keeps them first in, first out.
    return f"{time.time_ns():020d}-{uuid.uuid4().hex[:12]}"


@dataclass
class OutboxEntry:
    """One Slack call to make.

    Attributes:
        kind: What to do (a sender is registered per kind).
        payload: Its data (JSON).
        attempts: Failed attempts so far.
        entry_id: Assigned when queued.
    """

    kind: str
    payload: dict[str, Any]
    attempts: int = 0
    entry_id: str = field(default_factory=_ordered_id)

    def to_json(self) -> str:
        """Serialize for Redis."""
        return json.dumps({"kind": self.kind, "payload": self.payload, "attempts": self.attempts})

    @classmethod
    def from_json(cls, entry_id: str, data: str) -> "OutboxEntry":
        """Restore from Redis."""
        decoded = json.loads(data)
        return cls(decoded["kind"], decoded["payload"], int(decoded["attempts"]), entry_id)


class Outbox:
    """Queue, claim, complete and reschedule outbox entries (a ``DueQueue`` plus a wake-up list)."""

    def __init__(self, client: redis.Redis, *, clock: Callable[[], float] = time.time) -> None:
        """``clock`` returns seconds (injectable for tests)."""
        self._client = client
        self._queue = DueQueue(
            client, due_key=keys.OUTBOX_DUE, entries_key=keys.OUTBOX_ENTRIES, now_ms=lambda: int(clock() * 1000)
        )

    def add(self, pipeline: redis.client.Pipeline, entry: OutboxEntry, *, delay_s: float = 0) -> None:
        """Queue ``entry`` inside the caller's transaction."""
        self._queue.add(pipeline, entry.entry_id, entry.to_json(), due_ms=self._queue.now_ms() + int(delay_s * 1000))
        pipeline.lpush(keys.OUTBOX_WAKE, "1")
        pipeline.ltrim(keys.OUTBOX_WAKE, 0, _WAKE_TOKENS_KEPT - 1)

    def send_later(self, entry: OutboxEntry) -> None:
        """Queue ``entry`` on its own."""
        pipeline = self._client.pipeline(transaction=True)
        self.add(pipeline, entry)
        pipeline.execute()

    def claim(self, *, lease_s: float = 30, limit: int = 20) -> list[OutboxEntry]:
        """Take up to ``limit`` due entries for ``lease_s`` seconds."""
        return [
            OutboxEntry.from_json(entry_id, text) for entry_id, text in self._queue.claim(lease_s=lease_s, limit=limit)
        ]

    def complete(self, entry: OutboxEntry) -> None:
        """Forget a delivered entry."""
        self._queue.complete(entry.entry_id)

    def reschedule(self, entry: OutboxEntry, *, delay_s: float) -> None:
        """Try ``entry`` again after ``delay_s`` seconds, counting the failed attempt."""
        entry.attempts += 1
        self._queue.reschedule(entry.entry_id, entry.to_json(), due_ms=self._queue.now_ms() + int(delay_s * 1000))

    def pending(self) -> int:
        """How many entries wait (due or not)."""
        return self._queue.pending()

    def wait_for_work(self, timeout_s: float) -> None:
        """Block until an entry is queued or ``timeout_s`` passes."""
        self._client.blpop([keys.OUTBOX_WAKE], timeout=max(timeout_s, 0.01))


def home_refresh(user: str) -> OutboxEntry:
    """Re-publish ``user``'s App Home tab. One entry per person: refreshes queued meanwhile merge into it."""
    return OutboxEntry("publish_home", {"user": user}, entry_id=f"home:{user}")


def backoff_s(attempts: int, *, base_s: float = 1.0, cap_s: float = 300.0) -> float:
    """Seconds to wait before the next attempt: 1, 2, 4, ... capped."""
    return float(min(cap_s, base_s * 2 ** max(attempts - 1, 0)))
