"""Who opened the App Home tab, per workspace: their tab is refreshed whenever a request or decision there changes."""

import redis

from bot.store import keys
from state.text import as_text


class HomeViewers:
    """The users of each workspace whose App Home shows approvals (``keys.home_viewers``)."""

    def __init__(self, redis_client: redis.Redis) -> None:
        """Keep the client."""
        self._redis = redis_client

    def add(self, team_id: str, user_id: str) -> None:
        """Remember ``user_id`` of ``team_id`` as a viewer."""
        self._redis.sadd(keys.home_viewers(team_id), user_id)

    def of_team(self, team_id: str) -> list[str]:
        """Every viewer in ``team_id``."""
        return sorted(as_text(viewer) for viewer in self._redis.smembers(keys.home_viewers(team_id)))

    def forget_team(self, team_id: str) -> None:
        """Forget every viewer of ``team_id`` (the app was uninstalled there)."""
        self._redis.delete(keys.home_viewers(team_id))
