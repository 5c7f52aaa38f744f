"""On a Redis Cluster, a shard whose master is in trouble (dead, paused, failing over) is left alone for a moment.

Readers that visit every shard (the outbox's and the schedule's claims, the job streams, the idle waits) ask each
master on its own there, all at once: one master in trouble then costs its own shard only. A shard that has not
answered within ``ANSWER_WITHIN_S`` (redis-py's cluster client retries a failing master for seconds, until its
replica takes over) or that failed is skipped for ``RESTING_S``; a late answer is kept and taken by the next read of
the same kind. A read whose reply its client gave up on (then read again) leaves what it took to wait out its lease
or claim time, as a dead reader's would. On one server every shard shares the server's fate, and its readers keep
their one pipelined round trip.
"""

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Final

import redis
from redis.exceptions import ClusterError

logger = logging.getLogger(__name__)

RESTING_S: Final = 2.0
"""How long a shard whose master failed to answer is skipped."""
ANSWER_WITHIN_S: Final = 1.0
"""How long the other shards' answers wait for a shard's (a healthy master answers in a millisecond or so)."""
_THREADS_PER_SHARD: Final = 3
"""Room for reads still waiting on a troubled master while the next ones go out."""
SHARD_TROUBLE: Final = (redis.ConnectionError, redis.TimeoutError, ClusterError)
"""What a master in trouble answers (or what redis-py's cluster client raises for it)."""


class ShardRests:
    """Which shards are resting now. Thread-safe."""

    def __init__(self) -> None:
        """No shard rests."""
        self._until: dict[int, float] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._late: dict[tuple[str, int], Future[Any]] = {}

    def late(self, what: str, shard: int) -> "Future[Any] | None":
        """The read of ``what`` on ``shard`` that had not answered in time, if one is kept (it is handed over once)."""
        with self._lock:
            future = self._late.get((what, shard))
            if future is not None and future.done():
                del self._late[(what, shard)]
            return future

    def keep_late(self, what: str, shard: int, future: "Future[Any]") -> None:
        """Keep a read that has not answered in time, for the next read of ``what`` on ``shard`` to take."""
        with self._lock:
            self._late[(what, shard)] = future

    def submit(self, shards: int, read: Callable[[int], Any], shard: int) -> "Future[Any]":
        """Run ``read(shard)`` on this reader's threads (made on first use, a few per shard)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=shards * _THREADS_PER_SHARD, thread_name_prefix="shard")
            pool = self._pool
        return pool.submit(read, shard)

    def resting(self, shard: int) -> bool:
        """Whether ``shard``'s master failed to answer less than ``RESTING_S`` ago."""
        with self._lock:
            return time.monotonic() < self._until.get(shard, 0.0)

    def rest(self, shard: int, error: BaseException, *, what: str) -> None:
        """Leave ``shard`` alone for ``RESTING_S``: its master did not answer ``what``."""
        with self._lock:
            self._until[shard] = time.monotonic() + RESTING_S
        logger.warning(
            "shard=<%s> | its master did not answer %s; left alone for %s s: %s", shard, what, RESTING_S, error
        )


def each_shard(count: int, read: Callable[[int], Any], rests: ShardRests, *, what: str, missing: Any) -> list[Any]:
    """``read(shard)`` of each of ``count`` shards, all at once; a resting, failing or late shard's as ``missing``.

    ``what`` names the kind of read (one per call site): a late answer is kept for the next read of that kind. Raises
    the first error only when no shard answered (the caller's loop then backs off as for a Redis outage); an error
    that is not a master's trouble is raised as it is.
    """
    asked: dict[int, Future[Any]] = {}
    for shard in range(count):
        late = rests.late(what, shard)
        if late is not None:
            if late.done():
                asked[shard] = late  # answered since: its result is this read's
        elif not rests.resting(shard):
            asked[shard] = rests.submit(count, read, shard)
    wait(asked.values(), timeout=ANSWER_WITHIN_S)
    results: list[Any] = []
    troubles: list[BaseException] = []
    for shard in range(count):
        future = asked.get(shard)
        if future is None:
            results.append(missing)
            continue
        if not future.done():
            rests.keep_late(what, shard, future)
            trouble: BaseException | None = redis.TimeoutError(f"no answer within {ANSWER_WITHIN_S} s")
        else:
            trouble = future.exception()
            if trouble is not None and not isinstance(trouble, SHARD_TROUBLE):
                raise trouble
        if trouble is None:
            results.append(future.result())
            continue
        rests.rest(shard, trouble, what=what)
        troubles.append(trouble)
        results.append(missing)
    if troubles and len(troubles) == len(asked):
        raise troubles[0]
    return results
