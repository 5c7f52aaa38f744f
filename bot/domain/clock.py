"""Time, from one injectable clock: the system's, a sandbox's (``bot.store.offset_clock``), or a test's."""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

Clock = Callable[[], datetime]
"""Returns the current time (timezone-aware)."""


def system_clock() -> datetime:
    """The real time."""
    return datetime.now(UTC)


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


def offset_ms(clock: Clock) -> int:
    """How far ``clock`` is from the real time (0 for ``system_clock``): what a script adds to Redis' ``TIME``.

    A time that several processes compare (a grant's expiry) is read from Redis, one clock for all; a sandbox's
    or a test's moved clock still moves it.
    """
    return epoch_ms(clock()) - epoch_ms(system_clock())
