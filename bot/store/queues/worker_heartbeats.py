"""Each worker's last sign of life, so a probe can tell a live worker from a hung or dead one.

The probe is ``python -m bot worker-health``.

One sorted set (``keys.WORKER_HEARTBEATS``): member = the worker's consumer name, score = when it last beat
(unix ms). A worker beats every ``WORKER_HEARTBEAT_SECONDS``; one silent for ``MISSED_BEATS`` beats counts as dead.
Each beat also drops the dead members and renews the key's TTL, so the set stays as small as the fleet and
disappears once every worker is gone.
"""

import time
from collections.abc import Callable
from typing import Final

import redis

from bot.store import keys
from state.text import as_text

MISSED_BEATS: Final = 3


class WorkerHeartbeats:
    """Writes and reads the workers' heartbeats."""

    def __init__(
        self, redis_client: redis.Redis, *, beat_every_s: float, clock: Callable[[], float] = time.time
    ) -> None:
        """``beat_every_s``: how often workers beat; ``clock``: unix seconds."""
        self._redis = redis_client
        self.beat_every_s = beat_every_s
        self._clock = clock

    @property
    def fresh_s(self) -> float:
        """How recent a beat must be for its worker to count as alive."""
        return self.beat_every_s * MISSED_BEATS

    def beat(self, consumer: str) -> None:
        """Record that ``consumer`` is alive now."""
        fresh_s = self.fresh_s
        now_ms = int(self._clock() * 1000)
        pipeline = self._redis.pipeline(transaction=False)
        pipeline.zadd(keys.WORKER_HEARTBEATS, {consumer: now_ms})
        pipeline.zremrangebyscore(keys.WORKER_HEARTBEATS, "-inf", f"({now_ms - int(fresh_s * 1000)}")
        pipeline.pexpire(keys.WORKER_HEARTBEATS, int(fresh_s * 1000))
        pipeline.execute()

    def forget(self, consumer: str) -> None:
        """A worker stopping cleanly is gone at once, not after ``fresh_s``."""
        self._redis.zrem(keys.WORKER_HEARTBEATS, consumer)

    def live(self, *, max_age_s: float | None = None) -> dict[str, float]:
        """Every worker that beat within ``max_age_s`` (default ``fresh_s``): consumer name -> seconds since."""
        fresh_s = self.fresh_s if max_age_s is None else max_age_s
        now_ms = int(self._clock() * 1000)
        since_ms = now_ms - int(fresh_s * 1000)
        beats: list[tuple[bytes, float]] = self._redis.zrangebyscore(  # type: ignore[assignment]
            keys.WORKER_HEARTBEATS, since_ms, "+inf", withscores=True
        )
        return {as_text(member): max(0.0, (now_ms - score) / 1000) for member, score in beats}
