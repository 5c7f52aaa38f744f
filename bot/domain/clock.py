"""Time, from one injectable clock: the system's, a sandbox's (moved by a Redis offset), or a test's."""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final

import redis

Clock = Callable[[], datetime]
"""Returns the current time (timezone-aware)."""

SANDBOX_OFFSET_KEY: Final = "signoff:clock:offset_ms"


def system_clock() -> datetime:
    """The real time."""
    return datetime.now(UTC)


class OffsetClock:
    """The real time plus an offset kept in Redis, so a sandbox can move every process's time forward."""

    def __init__(self, client: redis.Redis) -> None:
        """Read the offset from ``client`` on every call."""
        self._client = client

    def offset_ms(self) -> int:
        """How far ahead of real time (0 if unset, or while Redis is unreachable)."""
        try:
            raw = self._client.get(SANDBOX_OFFSET_KEY)
        except redis.RedisError:
            return 0
        return int(raw) if raw is not None else 0

    def __call__(self) -> datetime:
        """Now, moved by the offset."""
        return datetime.now(UTC) + timedelta(milliseconds=self.offset_ms())


class ManualClock:
    """A clock a test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        """Start at ``start`` (default: a fixed moment)."""
        self.now = start or datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        """The current test time."""
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        self.now += timedelta(seconds=seconds)


def epoch_ms(at: datetime) -> int:
    """Milliseconds since the epoch (Redis scores)."""
    return int(at.timestamp() * 1000)
