"""Who opened the App Home tab: their tab is refreshed whenever a request or decision changes."""

import redis

from bot.store import keys
from state.text import as_text


class HomeViewers:
    """The set of users whose App Home shows approvals (``keys.HOME_VIEWERS``)."""

    def __init__(self, redis_client: redis.Redis) -> None:
        """Keep the client."""
        self._redis = redis_client

    def add(self, user_id: str) -> None:
        """Remember ``user_id`` as a viewer."""
        self._redis.sadd(keys.HOME_VIEWERS, user_id)

    def all(self) -> list[str]:
        """Every viewer."""
        return sorted(as_text(viewer) for viewer in self._redis.smembers(keys.HOME_VIEWERS))
