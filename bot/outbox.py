"""The outbox: Slack calls the bot owes, kept in Redis until Slack has taken them.

Entries are queued in the same transaction as the change that makes them due (an approval
round, a decision), so a crash or a Slack outage never loses one. A dispatcher claims due
entries with a lease (a dispatcher that dies releases them when the lease runs out), sends
them, and completes or reschedules them: with exponential backoff, or after ``Retry-After`` on
a 429. Delivery is at-least-once; senders make repeats harmless where Slack allows it.
"""

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import redis

from bot import keys

# KEYS: due zset, entries hash. ARGV: now ms, lease ms, limit.
# Moves each due entry's time to now + lease (so a dead dispatcher's entries come back) and
# returns a flat list id1, entry1, id2, entry2, ...
_CLAIM: Final = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local entry = redis.call('HGET', KEYS[2], id)
  if entry then
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), id)
    table.insert(out, id)
    table.insert(out, entry)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""

_WAKE_TOKENS_KEPT: Final = 64


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
    entry_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def to_json(self) -> str:
        """Serialize for Redis."""
        return json.dumps({"kind": self.kind, "payload": self.payload, "attempts": self.attempts})

    @classmethod
    def from_json(cls, entry_id: str, data: str) -> "OutboxEntry":
        """Restore from Redis."""
        decoded = json.loads(data)
        return cls(decoded["kind"], decoded["payload"], int(decoded["attempts"]), entry_id)


class Outbox:
    """Queue, claim, complete and reschedule outbox entries."""

    def __init__(self, client: redis.Redis, *, clock: Callable[[], float] = time.time) -> None:
        """Register the claim script."""
        self._client = client
        self._clock = clock
        self._claim = client.register_script(_CLAIM)

    def add(self, pipeline: redis.client.Pipeline, entry: OutboxEntry, *, delay_s: float = 0) -> None:
        """Queue ``entry`` inside the caller's transaction."""
        pipeline.hset(keys.OUTBOX_ENTRIES, entry.entry_id, entry.to_json())
        pipeline.zadd(keys.OUTBOX_DUE, {entry.entry_id: self._now_ms() + int(delay_s * 1000)})
        pipeline.lpush(keys.OUTBOX_WAKE, "1")
        pipeline.ltrim(keys.OUTBOX_WAKE, 0, _WAKE_TOKENS_KEPT - 1)

    def send_later(self, entry: OutboxEntry) -> None:
        """Queue ``entry`` on its own."""
        pipeline = self._client.pipeline(transaction=True)
        self.add(pipeline, entry)
        pipeline.execute()

    def claim(self, *, lease_s: float = 30, limit: int = 20) -> list[OutboxEntry]:
        """Take up to ``limit`` due entries for ``lease_s`` seconds."""
        flat = self._claim(
            keys=[keys.OUTBOX_DUE, keys.OUTBOX_ENTRIES], args=[self._now_ms(), int(lease_s * 1000), limit]
        )
        texts = [_text(item) for item in flat]
        return [OutboxEntry.from_json(texts[i], texts[i + 1]) for i in range(0, len(texts), 2)]

    def complete(self, entry: OutboxEntry) -> None:
        """Forget a delivered entry."""
        pipeline = self._client.pipeline(transaction=True)
        pipeline.zrem(keys.OUTBOX_DUE, entry.entry_id)
        pipeline.hdel(keys.OUTBOX_ENTRIES, entry.entry_id)
        pipeline.execute()

    def reschedule(self, entry: OutboxEntry, *, delay_s: float) -> None:
        """Try ``entry`` again after ``delay_s`` seconds, counting the failed attempt."""
        entry.attempts += 1
        pipeline = self._client.pipeline(transaction=True)
        pipeline.hset(keys.OUTBOX_ENTRIES, entry.entry_id, entry.to_json())
        pipeline.zadd(keys.OUTBOX_DUE, {entry.entry_id: self._now_ms() + int(delay_s * 1000)})
        pipeline.execute()

    def pending(self) -> int:
        """How many entries wait (due or not)."""
        return int(self._client.zcard(keys.OUTBOX_DUE))

    def wait_for_work(self, timeout_s: float) -> None:
        """Block until an entry is queued or ``timeout_s`` passes."""
        self._client.blpop([keys.OUTBOX_WAKE], timeout=max(timeout_s, 0.01))

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)


def backoff_s(attempts: int, *, base_s: float = 1.0, cap_s: float = 300.0) -> float:
    """Seconds to wait before the next attempt: 1, 2, 4, ... capped."""
    return float(min(cap_s, base_s * 2 ** max(attempts - 1, 0)))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
