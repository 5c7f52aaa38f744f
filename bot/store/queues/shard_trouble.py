"""On a Redis Cluster, a shard whose master is in trouble (dead, paused, failing over) is left alone for a moment.

Readers that visit every shard (the outbox's and the schedule's claims, the job streams, the idle waits) ask each
master on its own thread there, all at once: one master in trouble then costs its own shard only. Once one shard
answered, the others get ``LAGGARD_S`` more; a shard still silent then is not asked again until that read ends, and
its answer, if it comes, is kept for the next read of the same kind. A shard that failed, or that left the whole
read without an answer for ``ANSWER_WITHIN_S`` (redis-py's cluster client retries a failing master for seconds, until
its replica takes over), is skipped for ``RESTING_S``. That second is the master's own, never this process's: it counts
from when the read was sent, not while it waited for a thread, and a read that seems silent gets ``LAGGARD_S`` more to
be read (a long garbage collection stops every thread: answers that came meanwhile were not read yet; a stalled test
run once saw every healthy shard rest). A blocking read on one shard (``one_shard``) waits for its own answer only as
long as it asked the server to wait, plus ``LAGGARD_S``. A read whose reply its client gave up on has handed its
entries over all the same: the job streams read their own history after it (``bot.store.queues.jobs``); the outbox's
and the schedule's next claim of that shard takes back what the lost one took (``bot.store.queues.due``). On one
server every shard shares the server's fate, and its readers keep their one pipelined round trip.
"""

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Final

import redis
from redis.exceptions import ClusterError

logger = logging.getLogger(__name__)

RESTING_S: Final = 2.0
"""How long a shard whose master failed to answer is skipped."""
ANSWER_WITHIN_S: Final = 1.0
"""How long a read waits for the first shard's answer (a healthy master answers in a millisecond or so)."""
LAGGARD_S: Final = 0.1
"""Once one shard answered, how much longer the read waits for the others' answers (a late one is kept)."""
_THREADS_PER_SHARD: Final = 16
"""Made only when no thread is free, so a read is sent at once: room for every caller's read of a shard besides the
idle waits still blocking there and the reads a troubled master still owes (one of each kind)."""
SHARD_TROUBLE: Final = (redis.ConnectionError, redis.TimeoutError, ClusterError)
"""What a master in trouble answers (or what redis-py's cluster client raises for it)."""
RETRIED_AFTER_S: Final = 1.0
"""A call that took this long had an attempt time out (``REDIS_TIMEOUT_SECONDS``, at least 1 s) and sent again: the
first attempt may have run, its reply lost."""


class ShardRead:
    """One shard's read on a thread of its reader: its answer to come, and when it was sent (``None``: not yet)."""

    def __init__(self, pool: ThreadPoolExecutor, read: Callable[[int], Any], shard: int) -> None:
        """Hand ``read(shard)`` to ``pool``; it is sent once a thread takes it."""
        self.sent_at: float | None = None
        self.answer: Future[Any] = pool.submit(self._send, read, shard)

    def _send(self, read: Callable[[int], Any], shard: int) -> Any:
        self.sent_at = time.monotonic()
        return read(shard)

    def overdue(self, now: float) -> bool:
        """Whether the master has had this read for ``ANSWER_WITHIN_S`` without answering it."""
        return not self.answer.done() and self.sent_at is not None and now - self.sent_at >= ANSWER_WITHIN_S


class ShardRests:
    """Which shards are resting now. Thread-safe."""

    def __init__(self) -> None:
        """No shard rests."""
        self._until: dict[int, float] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._late: dict[tuple[str, int], ShardRead] = {}

    def late(self, what: str, shard: int) -> ShardRead | None:
        """The read of ``what`` on ``shard`` that had not answered in time, if one is kept (it is handed over once)."""
        with self._lock:
            late = self._late.get((what, shard))
            if late is not None and late.answer.done():
                del self._late[(what, shard)]
            return late

    def owed(self, what: str | None = None) -> bool:
        """Whether a read of ``what`` (any: ``None``) that answered late is kept for a later one (entries untaken)."""
        with self._lock:
            return any(what in (None, kind) for kind, _shard in self._late)

    def keep_late(self, what: str, shard: int, late: ShardRead) -> None:
        """Keep a read that has not answered in time, for the next read of ``what`` on ``shard`` to take."""
        with self._lock:
            self._late[(what, shard)] = late

    def submit(self, shards: int, read: Callable[[int], Any], shard: int) -> ShardRead:
        """Run ``read(shard)`` on this reader's threads (made as needed, up to ``_THREADS_PER_SHARD`` per shard)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=shards * _THREADS_PER_SHARD, thread_name_prefix="shard")
            pool = self._pool
        return ShardRead(pool, read, shard)

    def close(self) -> None:
        """Let this reader's threads end: at once when idle, else when their read ends (a troubled master's may not)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

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

    ``what`` names the kind of read (one per call site): a late answer is kept for the next read of that kind. An
    error that is not a master's trouble (a bug, a lost group) is its shard's too: logged, the shard's result
    ``missing``, the others' returned (their reads may have handed entries over). Raises the first error only when no
    shard answered (the caller's loop then backs off as for a Redis outage).
    """
    asked: dict[int, ShardRead] = {}
    for shard in range(count):
        late = rests.late(what, shard)
        if late is not None:
            if late.answer.done():
                asked[shard] = late  # answered since: its result is this read's
        elif not rests.resting(shard):
            asked[shard] = rests.submit(count, read, shard)
    silent = _wait_for_answers(list(asked.values()))
    results: list[Any] = []
    troubles: list[BaseException] = []
    for shard in range(count):
        asked_read = asked.get(shard)
        if asked_read is None:
            results.append(missing)
        elif not asked_read.answer.done():
            rests.keep_late(what, shard, asked_read)  # not asked again until it answers
            if asked_read in silent:
                trouble = redis.TimeoutError(f"no answer within {ANSWER_WITHIN_S} s")
                rests.rest(shard, trouble, what=what)
            else:  # a laggard, or a read this process sent late: not left alone
                trouble = redis.TimeoutError(f"no answer in time, yet not {ANSWER_WITHIN_S} s since it was sent")
            troubles.append(trouble)
            results.append(missing)
        else:
            result, failed = _own_answer(asked_read.answer, shard, rests, what=what, missing=missing)
            results.append(result)
            if failed is not None:
                troubles.append(failed)
    if troubles and len(troubles) == len(asked):
        raise troubles[0]
    return results


def _wait_for_answers(asked: list[ShardRead]) -> list[ShardRead]:
    """Until every shard answered, or ``ANSWER_WITHIN_S`` passed, or ``LAGGARD_S`` passed since the first answer.

    A shard in trouble then holds the healthy ones' answers back a moment, not a second. Returns the reads still
    silent: sent ``ANSWER_WITHIN_S`` ago or more, and unanswered even after ``LAGGARD_S`` more, in which this process
    reads the answers that came while it did not run.
    """
    deadline = time.monotonic() + ANSWER_WITHIN_S
    waiting = {read.answer for read in asked}
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        answered, waiting = wait(waiting, timeout=left, return_when=FIRST_COMPLETED)
        if answered and len(waiting) < len(asked):
            deadline = min(deadline, time.monotonic() + LAGGARD_S)
    now = time.monotonic()
    overdue = [read for read in asked if read.overdue(now)]
    if overdue:
        wait([read.answer for read in overdue], timeout=LAGGARD_S)
    return [read for read in overdue if not read.answer.done()]


def one_shard(
    count: int, shard: int, read: Callable[[int], Any], rests: ShardRests, *, what: str, missing: Any, within_s: float
) -> Any:
    """``read(shard)`` of one of ``count`` shards (a blocking read), waiting up to ``within_s`` for it.

    ``missing`` when the shard rests, when it has not answered an earlier read of ``what`` yet (that answer, once
    there, is the next read's), when this one is late (kept likewise) or failed; an error that is not a master's
    trouble is raised as it is. Never a second's wait for a shard in trouble, and nothing raised for it.
    """
    asked = rests.late(what, shard)
    if asked is None:
        if rests.resting(shard):
            return missing
        asked = rests.submit(count, read, shard)
        wait([asked.answer], timeout=within_s)
    if not asked.answer.done():
        rests.keep_late(what, shard, asked)  # an earlier read's still owed: kept as it was
        return missing
    return _raised(_answer(asked.answer, shard, rests, what=what, missing=missing))


def _raised(answer: tuple[Any, BaseException | None]) -> Any:
    """The result of an answer; an error that is not a master's trouble raised as it is."""
    result, failed = answer
    if failed is not None and not isinstance(failed, SHARD_TROUBLE):
        raise failed
    return result


def _own_answer(
    future: "Future[Any]", shard: int, rests: ShardRests, *, what: str, missing: Any
) -> tuple[Any, BaseException | None]:
    """``_answer``; any other error (a bug, a lost group) logged with its traceback: its shard's, not the read's."""
    try:
        return future.result(), None
    except SHARD_TROUBLE as failed:
        rests.rest(shard, failed, what=what)
        return missing, failed
    except Exception as failed:  # boundary: one shard's bug must not cost the other shards' answers
        logger.exception("shard=<%s> | %s failed", shard, what)
        return missing, failed


def _answer(
    future: "Future[Any]", shard: int, rests: ShardRests, *, what: str, missing: Any
) -> tuple[Any, BaseException | None]:
    """The answer of a finished read, or ``missing`` and its error (a master's trouble: the shard then rests)."""
    failed = future.exception()
    if failed is None:
        return future.result(), None
    if isinstance(failed, SHARD_TROUBLE):
        rests.rest(shard, failed, what=what)
    return missing, failed
