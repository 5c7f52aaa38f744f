"""Which Events API deliveries were handled: Slack redelivers an event it thinks we missed."""

from typing import Final

import redis

from bot.store import keys

_REMEMBERED_S: Final = 3600  # Slack retries within minutes; an hour covers its whole retry schedule


class EventDeliveries:
    """Remembers handled event ids for an hour (one key per event, ``keys.event_seen``)."""

    def __init__(self, redis_client: redis.Redis) -> None:
        """Keep the client."""
        self._redis = redis_client

    def first(self, event_id: str) -> bool:
        """Whether this is the first delivery of ``event_id`` (it is remembered from now on)."""
        return bool(self._redis.set(keys.event_seen(event_id), "1", nx=True, ex=_REMEMBERED_S))

    def forget(self, event_id: str) -> None:
        """Forget ``event_id``: handling it failed, so Slack's redelivery must be handled."""
        self._redis.delete(keys.event_seen(event_id))
