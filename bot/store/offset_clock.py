"""A sandbox's clock: the real time plus an offset kept in Redis, so a sandbox moves every process's time forward."""

from datetime import UTC, datetime, timedelta

import redis

from bot.store import keys


class OffsetClock:
    """The real time plus the offset under ``keys.CLOCK_OFFSET`` (a ``bot.domain.clock.Clock``)."""

    def __init__(self, client: redis.Redis) -> None:
        """Read the offset from ``client`` on every call."""
        self._client = client

    def offset_ms(self) -> int:
        """How far ahead of real time (0 if unset, or while Redis is unreachable)."""
        try:
            raw = self._client.get(keys.CLOCK_OFFSET)
        except redis.RedisError:
            return 0
        return int(raw) if raw is not None else 0

    def advance(self, advance_ms: int) -> int:
        """Move the clock forward by ``advance_ms``; return the new offset."""
        return int(self._client.incrby(keys.CLOCK_OFFSET, advance_ms))

    def __call__(self) -> datetime:
        """Now, moved by the offset."""
        return datetime.now(UTC) + timedelta(milliseconds=self.offset_ms())
