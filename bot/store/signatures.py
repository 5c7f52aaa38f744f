"""Signed Slack requests already acted on: the same signature seen again is a replay.

A request is remembered under ``keys.seen_signature``: on the shared key by the request guard,
and, for an Approve click, on the shard of the session it acts on, where the decide script
(``bot.store.scripts.decide``) checks and records it in the same atomic step as the decision.
"""

import redis

from bot.store import keys


class SeenSignatures:
    """Remembers request signatures for as long as a replay of them would still verify."""

    def __init__(self, redis_client: redis.Redis) -> None:
        """Keep the client."""
        self._redis = redis_client

    def first(self, signature: str, *, remember_s: int, shard: int | None = None) -> bool:
        """Record ``signature`` as used; whether it was new (``False``: a replay).

        Raises:
            redis.ConnectionError, redis.TimeoutError: Redis is unreachable (nothing was recorded).
        """
        key = keys.seen_signature(signature, shard=shard)
        return bool(self._redis.set(key, "1", nx=True, ex=max(remember_s, 1)))
