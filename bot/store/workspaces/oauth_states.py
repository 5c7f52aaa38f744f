"""OAuth ``state`` values in Redis: Bolt's ``OAuthStateStore``.

``/slack/install`` issues one per visit; ``/slack/oauth_redirect`` consumes it once (``GETDEL``: two callbacks
with one state, or a replayed one, install at most once). Each is one key with a TTL, safe on Redis Cluster.
"""

import logging
import secrets

import redis
from slack_sdk.oauth.state_store import OAuthStateStore

from bot.store import keys

logger = logging.getLogger(__name__)

STATE_KEPT_S = 600
"""How long an install link stays valid (Bolt's state cookie lives as long)."""


class OAuthStates(OAuthStateStore):
    """Issued, not yet consumed OAuth states (``keys.oauth_state``)."""

    def __init__(self, redis_client: redis.Redis, *, kept_s: int = STATE_KEPT_S) -> None:
        """Keep the client; a state expires ``kept_s`` seconds after it is issued."""
        self._redis = redis_client
        self.expiration_seconds = kept_s

    @property
    def logger(self) -> logging.Logger:
        """Bolt logs through it."""
        return logger

    def issue(self, *args: object, **kwargs: object) -> str:
        """A new state, valid for one callback."""
        del args, kwargs
        state = secrets.token_urlsafe(24)
        self._redis.set(keys.oauth_state(state), "1", ex=self.expiration_seconds)
        return state

    def consume(self, state: str) -> bool:
        """Whether ``state`` was issued and not consumed yet; it is consumed either way."""
        if not state:
            return False
        return self._redis.getdel(keys.oauth_state(state)) is not None
