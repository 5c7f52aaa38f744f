"""Who opened the App Home tab lately, per workspace: their tab is refreshed when a request they can see changes.

A viewer is kept ``keep_s`` (``HOME_VIEWER_HOURS``) after they last opened the tab: someone who stopped looking
costs no rebuild, and opening the tab again remembers them anew.
"""

import time
from collections.abc import Callable

import redis

from bot.store import keys
from state.text import as_text

DEFAULT_KEEP_S = 24 * 3600
"""How long a viewer is kept after opening the tab, unless told otherwise (``HOME_VIEWER_HOURS``'s default)."""


class HomeViewers:
    """Each workspace's users whose App Home shows approvals, by when they last opened it (``keys.home_viewers``)."""

    def __init__(
        self, redis_client: redis.Redis, *, keep_s: float = DEFAULT_KEEP_S, clock: Callable[[], float] = time.time
    ) -> None:
        """``keep_s``: how long a viewer outlives their last opening; ``clock`` returns seconds."""
        self._redis = redis_client
        self._keep_ms = int(keep_s * 1000)
        self._clock = clock

    def add(self, team_id: str, user_id: str) -> None:
        """Remember ``user_id`` of ``team_id`` as a viewer from now on, and forget those who stopped looking."""
        now_ms = int(self._clock() * 1000)
        pipeline = self._redis.pipeline(transaction=True)
        pipeline.zadd(keys.home_viewers(team_id), {user_id: now_ms})
        pipeline.zremrangebyscore(keys.home_viewers(team_id), "-inf", f"({now_ms - self._keep_ms}")
        pipeline.pexpire(keys.home_viewers(team_id), self._keep_ms)  # a workspace nobody looks at leaves no key
        pipeline.execute()

    def of_team(self, team_id: str) -> list[str]:
        """The viewers of ``team_id`` who opened the tab within ``keep_s``."""
        since_ms = int(self._clock() * 1000) - self._keep_ms
        viewers: list[bytes] = self._redis.zrangebyscore(keys.home_viewers(team_id), since_ms, "+inf")  # type: ignore[assignment]
        return sorted(as_text(viewer) for viewer in viewers)

    def forget_team(self, team_id: str) -> None:
        """Forget every viewer of ``team_id`` (the app was uninstalled there)."""
        self._redis.delete(keys.home_viewers(team_id))
