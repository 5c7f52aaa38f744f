"""A due queue in Redis: entries by due time, claimed with a lease, completed or rescheduled.

The outbox and the escalation schedule are both due queues. A tick reads only what is due
(ZRANGEBYSCORE with a limit), so its cost follows the number of due entries, not the number
pending; an entry claimed by a process that dies comes back when its lease runs out; any
number of processes may claim at once, and each entry is taken by exactly one.
"""

from collections.abc import Callable
from typing import Any, Final

import redis

# KEYS: due zset, entries hash, [claims hash]. ARGV: now ms, lease ms, limit.
# Moves each due entry's time to now + lease (and counts the claim, with a claims hash) and returns
# a flat list id1, entry1, claims1, id2, entry2, claims2, ... (claims 0 without a claims hash).
_CLAIM: Final = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local entry = redis.call('HGET', KEYS[2], id)
  if entry then
    redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), id)
    table.insert(out, id)
    table.insert(out, entry)
    if KEYS[3] then table.insert(out, redis.call('HINCRBY', KEYS[3], id, 1)) else table.insert(out, 0) end
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""


class DueQueue:
    """Entries (id -> JSON text) in ``entries_key``, ordered by due time in ``due_key``.

    With a ``claims_key`` (a hash), each claim of an entry is counted until it completes: a count
    above one means an earlier holder may have done part of the work before its lease ran out.
    """

    def __init__(
        self,
        client: redis.Redis,
        *,
        due_key: str,
        entries_key: str,
        now_ms: Callable[[], int],
        claims_key: str | None = None,
    ) -> None:
        """Register the claim script; ``now_ms`` is the queue's clock."""
        self._client = client
        self.due_key = due_key
        self.entries_key = entries_key
        self.claims_key = claims_key
        self._now_ms = now_ms
        self._claim = client.register_script(_CLAIM)

    def add(self, pipeline: redis.client.Pipeline, entry_id: str, entry: str, *, due_ms: int) -> None:
        """Queue (or replace) an entry inside the caller's transaction."""
        pipeline.hset(self.entries_key, entry_id, entry)
        pipeline.zadd(self.due_key, {entry_id: due_ms})

    def claim(self, *, lease_s: float, limit: int) -> list[tuple[str, str]]:
        """Take up to ``limit`` due entries for ``lease_s`` seconds: ``(id, entry)`` pairs."""
        return [(entry_id, entry) for entry_id, entry, _claims in self.claim_counted(lease_s=lease_s, limit=limit)]

    def claim_counted(self, *, lease_s: float, limit: int) -> list[tuple[str, str, int]]:
        """Like ``claim``, with how many times each entry was claimed so far (this claim included)."""
        keys = [self.due_key, self.entries_key, *([self.claims_key] if self.claims_key else [])]
        flat = self._claim(keys=keys, args=[self._now_ms(), int(lease_s * 1000), limit])
        texts = [_text(item) for item in flat]
        return [(texts[index], texts[index + 1], int(texts[index + 2])) for index in range(0, len(texts), 3)]

    def complete(self, entry_id: str) -> None:
        """Forget an entry."""
        pipeline = self._client.pipeline(transaction=True)
        pipeline.zrem(self.due_key, entry_id)
        pipeline.hdel(self.entries_key, entry_id)
        if self.claims_key:
            pipeline.hdel(self.claims_key, entry_id)
        pipeline.execute()

    def reschedule(self, entry_id: str, entry: str, *, due_ms: int, reset_claims: bool = False) -> None:
        """Replace an entry and set its due time (``reset_claims``: count its claims from zero again)."""
        pipeline = self._client.pipeline(transaction=True)
        pipeline.hset(self.entries_key, entry_id, entry)
        pipeline.zadd(self.due_key, {entry_id: due_ms})
        if reset_claims and self.claims_key:
            pipeline.hdel(self.claims_key, entry_id)
        pipeline.execute()

    def pending(self) -> int:
        """How many entries wait (due or not)."""
        return int(self._client.zcard(self.due_key))

    def now_ms(self) -> int:
        """The queue's current time."""
        return self._now_ms()


def _text(value: Any) -> str:
    # A byte that is not UTF-8 becomes a lone surrogate, not an error that would stop the whole
    # claim: the owner of the entry refuses it when it parses it (``bytes_of`` gives the bytes back).
    return value.decode(errors="surrogateescape") if isinstance(value, bytes) else str(value)


def bytes_of(text: str) -> bytes:
    """The bytes stored for ``text`` as a claim returned it (undoes the decoding, bad bytes included)."""
    return text.encode(errors="surrogateescape")
