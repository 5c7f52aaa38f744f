"""On a Redis Cluster, a shard whose master is in trouble (dead, paused, failing over) is left alone for a moment.

Readers that visit every shard (the outbox's and the schedule's claims, the job streams, the idle waits) ask each
master on its own there: one master in trouble then costs its own shard only, and after one failure that shard is
skipped for ``RESTING_S`` instead of costing every pass a timeout. On one server every shard shares the server's
fate, and its readers keep their one pipelined round trip.
"""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Final

import redis
from redis.exceptions import ClusterError

logger = logging.getLogger(__name__)

RESTING_S: Final = 2.0
"""How long a shard whose master failed to answer is skipped."""
SHARD_TROUBLE: Final = (redis.ConnectionError, redis.TimeoutError, ClusterError)
"""What a master in trouble answers (or what redis-py's cluster client raises for it)."""


class ShardRests:
    """Which shards are resting now. Thread-safe."""

    def __init__(self) -> None:
        """No shard rests."""
        self._until: dict[int, float] = {}
        self._lock = threading.Lock()

    def resting(self, shard: int) -> bool:
        """Whether ``shard``'s master failed to answer less than ``RESTING_S`` ago."""
        with self._lock:
            return time.monotonic() < self._until.get(shard, 0.0)

    def rest(self, shard: int, error: Exception, *, what: str) -> None:
        """Leave ``shard`` alone for ``RESTING_S``: its master did not answer ``what``."""
        with self._lock:
            self._until[shard] = time.monotonic() + RESTING_S
        logger.warning(
            "shard=<%s> | its master did not answer %s; left alone for %s s: %s", shard, what, RESTING_S, error
        )


def each_shard(count: int, read: Callable[[int], Any], rests: ShardRests, *, what: str, missing: Any) -> list[Any]:
    """``read(shard)`` of each of ``count`` shards, one call each; a resting or failing shard's as ``missing``.

    Raises the first error only when no shard answered (the caller's loop then backs off as for a Redis outage).
    """
    results: list[Any] = []
    troubles: list[Exception] = []
    asked = 0
    for shard in range(count):
        if rests.resting(shard):
            results.append(missing)
            continue
        asked += 1
        try:
            results.append(read(shard))
        except SHARD_TROUBLE as error:
            rests.rest(shard, error, what=what)
            troubles.append(error)
            results.append(missing)
    if troubles and len(troubles) == asked:
        raise troubles[0]
    return results
