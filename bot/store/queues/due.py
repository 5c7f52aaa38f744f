"""A due queue in Redis: entries by due time, claimed with a lease, completed or rescheduled.

The outbox and the escalation schedule are both due queues. A tick reads only what is due
(ZRANGEBYSCORE with a limit), so its cost follows the number of due entries, not the number
pending; an entry claimed by a process that dies comes back when its lease runs out; any
number of processes may claim at once, and each entry is taken by exactly one.

A claim whose reply was lost (the client gave up waiting, the server ran it later) has taken its entries all the
same: each claim lists them in a record named by a token of its own (``claim_due.lua`` of ``bot.store.scripts``),
and the queue's next claim in this client takes back those still carrying that claim's lease end, in the same round
trip, instead of leaving them to wait out the lease. So does the claim after one that took a second or more (a retry
may have sent it twice), less what its reply handed over.
"""

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Final

import redis
from redis.cluster import RedisCluster
from redis.commands.core import Script
from redis.exceptions import NoScriptError

from bot.store import keys, scripts
from bot.store.pipelined import run_each
from bot.store.queues.shard_trouble import RETRIED_AFTER_S, ShardRests, each_shard
from state.text import bytes_of, lossless_text

logger = logging.getLogger(__name__)

_LOST_KEPT: Final = 64
"""Claims whose reply may be lost that a queue remembers at most (each ends with its lease: its entries are due)."""


@dataclass
class FencedWrites:
    """Writes that apply only while one claim of an entry still holds it (``DueQueue.apply``).

    It offers the pipeline methods the owners' write helpers call (``hset``, ``zadd``, ``xadd``...),
    so each owner writes its own records through it as through a transaction; they apply atomically,
    or not at all when the claim was overtaken.

    Attributes:
        entry_id: The claimed entry (``None``: no fence, the writes always apply).
        lease_until_ms: The lease end the claim set (the fence).
        keys: The keys written, the due zset first.
    """

    entry_id: str | None
    lease_until_ms: int
    keys: list[str]
    args: list[str | int | float] = field(default_factory=list)

    def drop_fence(self) -> None:
        """Apply these writes whatever happened to the entry (it was consumed on purpose, e.g. by a decision)."""
        self.entry_id = None

    def hset(
        self,
        name: str,
        key: str | None = None,
        value: str | int | None = None,
        *,
        mapping: Mapping[str, str | int] | None = None,
    ) -> None:
        """``HSET``."""
        pairs = [
            *((key, value) if key is not None and value is not None else ()),
            *(item for pair in (mapping or {}).items() for item in pair),
        ]
        self._write("HSET", name, *pairs)

    def hdel(self, name: str, *fields: str) -> None:
        """``HDEL``."""
        self._write("HDEL", name, *fields)

    def zadd(self, name: str, mapping: Mapping[str, int | float]) -> None:
        """``ZADD`` (member -> score)."""
        self._write("ZADD", name, *(item for member, score in mapping.items() for item in (score, member)))

    def zrem(self, name: str, *members: str) -> None:
        """``ZREM``."""
        self._write("ZREM", name, *members)

    def lpush(self, name: str, *values: str) -> None:
        """``LPUSH``."""
        self._write("LPUSH", name, *values)

    def ltrim(self, name: str, start: int, end: int) -> None:
        """``LTRIM``."""
        self._write("LTRIM", name, start, end)

    def xadd(self, name: str, fields: Mapping[str, str]) -> None:
        """``XADD`` with an id the server assigns."""
        self._write("XADD", name, "*", *(item for pair in fields.items() for item in pair))

    def _write(self, command: str, key: str, *arguments: Any) -> None:
        if key not in self.keys:
            self.keys.append(key)
        self.args.extend([self.keys.index(key) + 1, len(arguments), command, *arguments])

    def script_args(self) -> list[str | int | float]:
        """ARGV of the fenced-writes script."""
        return [self.entry_id or "", self.lease_until_ms, *self.args]


@dataclass(frozen=True)
class Leased:
    """Entries a claim took (``(id, entry)`` pairs) and the lease end it set on them (the fence of their writes)."""

    until_ms: int
    entries: list[tuple[str, str]]


@dataclass(frozen=True)
class _Attempt:
    """One claim of one queue: the token of its record, the lease end it set, and the ids its reply handed over."""

    token: str
    until_ms: int
    handed: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Claim:
    """A claim ready to send (its script's keys and arguments), and the earlier ones whose entries it takes back."""

    attempt: _Attempt
    lost: tuple[_Attempt, ...]
    keys: list[str]
    args: list[str | int | bytes]


@dataclass(frozen=True)
class _Taken:
    """What one claim of one queue took (``(id, entry, claims)`` rows) and the lease end it set on them."""

    until_ms: int
    rows: list[tuple[str, str, int]]


@dataclass(kw_only=True, eq=False)
class DueQueue:
    """Entries (id -> JSON text) in ``entries_key``, ordered by due time in ``due_key``.

    With a ``claims_key`` (a hash), each claim of an entry is counted until it completes: a count
    above one means an earlier holder may have done part of the work before its lease ran out.

    Attributes:
        client: The Redis the queue lives in.
        due_key: The zset of entry ids by due time (ms).
        entries_key: The hash of entries by id.
        clock: The queue's time, in ms.
        record_key: The key of the record of what one claim took, by the claim's token (``keys.claim_record``).
        claims_key: The hash of claim counts by entry id (``None``: claims are not counted).
    """

    client: redis.Redis
    due_key: str
    entries_key: str
    clock: Callable[[], int]
    record_key: Callable[[str], str]
    claims_key: str | None = None
    _claim: Script = field(init=False, repr=False)
    _fenced: Script = field(init=False, repr=False)
    _lost: list[_Attempt] = field(init=False, repr=False, default_factory=list)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        """Register the claim and fenced-writes scripts."""
        self._claim = self.client.register_script(scripts.CLAIM_DUE.text)
        self._fenced = self.client.register_script(scripts.FENCED_WRITES.text)

    @classmethod
    def per_shard(
        cls,
        client: redis.Redis,
        *,
        due_key: Callable[[int], str],
        entries_key: Callable[[int], str],
        now_ms: Callable[[], int],
        name: str,
        claims_key: Callable[[int], str] | None = None,
    ) -> list["DueQueue"]:
        """One queue on each shard (``keys.shards()``), its keys named for the shard; all share ``now_ms``.

        ``name`` names the queue's claim records (``keys.claim_record``).
        """
        return [
            cls(
                client=client,
                due_key=due_key(shard),
                entries_key=entries_key(shard),
                clock=now_ms,
                record_key=partial(keys.claim_record, shard, name),
                claims_key=claims_key(shard) if claims_key else None,
            )
            for shard in keys.shards()
        ]

    def add(self, pipeline: redis.client.Pipeline | FencedWrites, entry_id: str, entry: str, *, due_ms: int) -> None:
        """Queue (or replace) an entry inside the caller's transaction (or with the caller's fenced writes)."""
        pipeline.hset(self.entries_key, entry_id, entry)
        pipeline.zadd(self.due_key, {entry_id: due_ms})

    def claim(self, *, lease_s: float, limit: int) -> list[tuple[str, str]]:
        """Take up to ``limit`` due entries for ``lease_s`` seconds: ``(id, entry)`` pairs."""
        return [(entry_id, entry) for entry_id, entry, _claims in self.claim_counted(lease_s=lease_s, limit=limit)]

    def claim_counted(self, *, lease_s: float, limit: int) -> list[tuple[str, str, int]]:
        """Like ``claim``, with how many times each entry was claimed so far (this claim included)."""
        return self._claim_at(self.clock(), lease_ms=int(lease_s * 1000), limit=limit).rows

    def lease(self, *, lease_s: float, limit: int) -> Leased:
        """Like ``claim``, with the lease end: writes fenced by it (``fenced``) apply only while the claim holds."""
        taken = self._claim_at(self.clock(), lease_ms=int(lease_s * 1000), limit=limit)
        return Leased(taken.until_ms, [(entry_id, entry) for entry_id, entry, _claims in taken.rows])

    def _claim_at(self, now_ms: int, *, lease_ms: int, limit: int) -> _Taken:
        claim = self._prepare(now_ms, lease_ms=lease_ms, limit=limit)
        started = time.monotonic()
        try:
            reply = self._claim(keys=claim.keys, args=claim.args)
        except Exception:
            self._unanswered(claim)
            raise
        return self._answered(claim, reply, took_s=time.monotonic() - started)

    def _prepare(self, now_ms: int, *, lease_ms: int, limit: int) -> _Claim:
        """A claim under a token of its own, taking back first what this queue's claims whose reply was lost took."""
        attempt = _Attempt(os.urandom(12).hex(), now_ms + lease_ms)  # 96 random bits (a uuid4 costs 5 us more)
        with self._lock:
            self._lost = [lost for lost in self._lost if lost.until_ms > now_ms]  # the others' entries are due again
            lost = tuple(self._lost)
        keys = scripts.CLAIM_DUE.key_list(
            *(self.record_key(earlier.token) for earlier in lost),
            *([self.claims_key] if self.claims_key else []),
            due_key=self.due_key,
            entries_key=self.entries_key,
            record_key=self.record_key(attempt.token),
        )
        handed: list[str | int | bytes] = []
        for earlier in lost:
            handed.extend([earlier.until_ms, len(earlier.handed), *(bytes_of(entry_id) for entry_id in earlier.handed)])
        args = scripts.CLAIM_DUE.arg_list(*handed, now_ms=now_ms, lease_ms=lease_ms, limit=limit, lost_count=len(lost))
        return _Claim(attempt, lost, keys, args)

    def _script_call(self, claim: _Claim) -> tuple[Any, ...]:
        """The EVALSHA of ``claim``, for ``_claim_each`` to pipeline with other queues' claims."""
        return ("EVALSHA", self._claim.sha, len(claim.keys), *claim.keys, *claim.args)

    def _answered(self, claim: _Claim, reply: Any, *, took_s: float) -> _Taken:
        """What ``claim`` took; a slow one is remembered as if lost (a retry may have sent it twice), less these."""
        # Lossless: a byte that is not UTF-8 must not stop the whole claim; the entry's owner refuses it.
        texts = [lossless_text(item) for item in reply]
        rows = [(texts[index], texts[index + 1], int(texts[index + 2])) for index in range(0, len(texts), 3)]
        with self._lock:
            self._lost = [lost for lost in self._lost if lost not in claim.lost]  # taken back: their records are gone
            if took_s >= RETRIED_AFTER_S:
                self._remember(replace(claim.attempt, handed=tuple(entry_id for entry_id, _entry, _claims in rows)))
        return _Taken(claim.attempt.until_ms, rows)

    def _unanswered(self, claim: _Claim) -> None:
        """``claim`` may have run all the same: the next claim takes back what it took."""
        with self._lock:
            self._remember(claim.attempt)

    def _remember(self, attempt: _Attempt) -> None:
        if len(self._lost) < _LOST_KEPT:  # the first ones of an outage are the likeliest to have run
            self._lost.append(attempt)

    def fenced(self, entry_id: str, *, lease_until_ms: int) -> FencedWrites:
        """Writes for a claimed entry, applied by ``apply`` only while that claim still holds it."""
        return FencedWrites(entry_id, lease_until_ms, [self.due_key])

    def remove(self, writes: FencedWrites | redis.client.Pipeline, entry_id: str) -> None:
        """Forget an entry inside the caller's writes."""
        writes.zrem(self.due_key, entry_id)
        writes.hdel(self.entries_key, entry_id)
        if self.claims_key:
            writes.hdel(self.claims_key, entry_id)

    def apply(self, batch: Sequence[FencedWrites]) -> list[bool]:
        """Apply each entry's fenced writes atomically, all of them in one round trip.

        Returns, per entry, whether its writes applied (``False``: the claim was overtaken, or the
        write failed; the error is logged and the entry comes back when its lease runs out).
        """
        calls = [(writes.keys, writes.script_args()) for writes in batch]
        applied = []
        for writes, result in zip(batch, run_each(self.client, self._fenced, calls), strict=True):
            if isinstance(result, Exception):
                logger.error("entry=<%s> | fenced writes failed: %s", writes.entry_id, result)
            applied.append(result == 1)
        return applied

    def complete(self, entry_id: str) -> None:
        """Forget an entry."""
        pipeline = self.client.pipeline(transaction=True)
        pipeline.zrem(self.due_key, entry_id)
        pipeline.hdel(self.entries_key, entry_id)
        if self.claims_key:
            pipeline.hdel(self.claims_key, entry_id)
        pipeline.execute()

    def reschedule(self, entry_id: str, entry: str, *, due_ms: int, reset_claims: bool = False) -> None:
        """Replace an entry and set its due time (``reset_claims``: count its claims from zero again)."""
        pipeline = self.client.pipeline(transaction=True)
        pipeline.hset(self.entries_key, entry_id, entry)
        pipeline.zadd(self.due_key, {entry_id: due_ms})
        if reset_claims and self.claims_key:
            pipeline.hdel(self.claims_key, entry_id)
        pipeline.execute()

    def pending(self) -> int:
        """How many entries wait (due or not)."""
        return int(self.client.zcard(self.due_key))

    def now_ms(self) -> int:
        """The queue's current time."""
        return self.clock()


def lease_each(
    client: redis.Redis, queues: Sequence[DueQueue], *, lease_s: float, limit: int, rests: ShardRests
) -> list[Leased]:
    """``DueQueue.lease`` of every queue (one per shard, in shard order; up to ``limit`` each), in one pipeline.

    One round trip on one server however many shards; on a cluster one call per master, a master in trouble
    costing its own shard only (``bot.store.queues.shard_trouble``).
    """
    if not queues:
        return []
    now_ms, lease_ms = queues[0].now_ms(), int(lease_s * 1000)
    return [
        # Each its own lease end: on a cluster a shard's answer may be an earlier claim's, kept late.
        Leased(taken.until_ms, [(entry_id, entry) for entry_id, entry, _claims in taken.rows])
        for taken in _claim_each(client, queues, now_ms, lease_ms=lease_ms, limit=limit, rests=rests)
    ]


def soonest_due_s(client: redis.Redis, queues: Sequence[DueQueue], *, rests: ShardRests) -> float | None:
    """Seconds until the soonest entry of any of ``queues`` is due.

    0: one is due now; ``None``: all are empty. In one pipeline (as ``lease_each``). A claimed entry counts as due when
    its lease ends.
    """
    if not queues:
        return None
    if isinstance(client, RedisCluster):
        firsts = _each_apart(
            queues, lambda queue: queue.client.zrange(queue.due_key, 0, 0, withscores=True), rests, what="soonest due"
        )
    else:
        pipeline = client.pipeline(transaction=False)
        for queue in queues:
            pipeline.zrange(queue.due_key, 0, 0, withscores=True)
        firsts = pipeline.execute()
    soonest = [float(rows[0][1]) for rows in firsts if rows]
    if not soonest:
        return None
    return max(0.0, (min(soonest) - queues[0].now_ms()) / 1000)


def claim_counted_each(
    client: redis.Redis, queues: Sequence[DueQueue], *, lease_s: float, limit: int, rests: ShardRests
) -> list[list[tuple[str, str, int]]]:
    """``DueQueue.claim_counted`` of every queue (up to ``limit`` each), in one pipeline (as ``lease_each``)."""
    if not queues:
        return []
    claimed = _claim_each(client, queues, queues[0].now_ms(), lease_ms=int(lease_s * 1000), limit=limit, rests=rests)
    return [taken.rows for taken in claimed]


def _claim_each(
    client: redis.Redis, queues: Sequence[DueQueue], now_ms: int, *, lease_ms: int, limit: int, rests: ShardRests
) -> list[_Taken]:
    if isinstance(client, RedisCluster):
        # A pipeline over every master fails whole when one does, and what the others leased would wait out its
        # lease unseen: each master is asked on its own.
        return _each_apart(
            queues,
            lambda queue: queue._claim_at(now_ms, lease_ms=lease_ms, limit=limit),
            rests,
            what="a claim",
            missing=_Taken(now_ms + lease_ms, []),
        )
    claims = [queue._prepare(now_ms, lease_ms=lease_ms, limit=limit) for queue in queues]

    def run() -> list[Any]:
        pipeline = client.pipeline(transaction=False)
        for queue, claim in zip(queues, claims, strict=True):
            # Through execute_command: a cluster pipeline refuses its evalsha() method, not the command.
            pipeline.execute_command(*queue._script_call(claim))  # type: ignore[no-untyped-call]
        return list(pipeline.execute(raise_on_error=False))

    started = time.monotonic()
    try:
        replies = run()
        if any(isinstance(reply, NoScriptError) for reply in replies):  # first use, a restart, a failover
            client.script_load(scripts.CLAIM_DUE.text)
            replies = run()
        failed = next((reply for reply in replies if isinstance(reply, Exception)), None)
        if failed is not None:
            raise failed  # what the other shards took is handed over by the next claim, as a lost reply's
    except Exception:
        for queue, claim in zip(queues, claims, strict=True):
            queue._unanswered(claim)
        raise
    took_s = time.monotonic() - started
    answered = zip(queues, claims, replies, strict=True)
    return [queue._answered(claim, reply, took_s=took_s) for queue, claim, reply in answered]


def _each_apart(
    queues: Sequence[DueQueue], read: Callable[[DueQueue], Any], rests: ShardRests, *, what: str, missing: Any = ()
) -> list[Any]:
    """``read`` of each queue (one per shard, in order) on its own (``each_shard``); a missing one's as ``missing``."""
    return each_shard(len(queues), lambda shard: read(queues[shard]), rests, what=what, missing=missing)
