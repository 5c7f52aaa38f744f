"""A worker that dies mid-job, in process: one method of the runner or publisher fails once (the job is not
acknowledged, so it comes back), and another worker picks it up."""

from collections.abc import Callable
from typing import Any

from tests.bot.support.harness import Bot, take_over


class Crash(Exception):
    """The worker dies here (the job is not acknowledged, so it comes back)."""


def crash_once(part: object, method: str) -> None:
    """Make ``part.method`` (the runner's or publisher's) fail on its next call only (a crash at that point)."""
    original: Callable[..., Any] = getattr(part, method)
    calls = {"n": 0}

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise Crash(method)
        return original(*args, **kwargs)

    setattr(part, method, failing)


def redeliver(bot: Bot) -> None:
    """Another worker picks up whatever the crashed one left unacknowledged."""
    take_over(bot.services.worker(claim_idle_ms=0))
    bot.drain()
