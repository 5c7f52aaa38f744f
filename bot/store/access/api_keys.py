"""API keys: who may use the HTTP API, by name. A key is kept only as its SHA-256; revoking deletes it.

Each client also has a callback secret: the decisions sent to its callback URL are signed with it
(the client checks them). Unlike the key, the secret is kept as it is: signing needs it.
"""

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Final

import redis

from bot.store import keys
from state.text import as_text

KEY_PREFIX: Final = "sk_signoff_"
SECRET_PREFIX: Final = "whsec_"


@dataclass(frozen=True)
class ApiClient:
    """An API client.

    The name its requests are audited and shown under, its callback secret, and the workspace its requests are asked in
    ("" for the one workspace of a single-token bot).
    """

    name: str
    callback_secret: str
    created_at_ms: int
    team_id: str = ""


@dataclass(frozen=True)
class IssuedKey:
    """A key just created: shown once to the operator, never stored."""

    client: ApiClient
    key: str


class ApiKeys:
    """Creates, looks up, lists and revokes API keys."""

    def __init__(self, client: redis.Redis) -> None:
        """Keep the client."""
        self._client = client

    def create(self, name: str, *, key: str | None = None, team_id: str = "") -> IssuedKey | None:
        """Issue a key for a new client ``name``; ``None`` if the name is taken (revoke it first).

        ``key``: one chosen by the caller, e.g. the sandbox's; ``team_id``: the workspace its requests are asked in,
        which an OAuth install of several needs.
        """
        key = key or new_key()
        digest = _sha256(key)
        record = {"key_sha256": digest, "callback_secret": SECRET_PREFIX + secrets.token_urlsafe(32)}
        record["created_at_ms"] = str(int(time.time() * 1000))
        if team_id:
            record["team_id"] = team_id
        with self._client.pipeline(transaction=True) as transaction:
            try:
                transaction.watch(keys.API_CLIENTS)  # type: ignore[no-untyped-call]
                if transaction.hexists(keys.API_CLIENTS, name):
                    return None
                transaction.multi()
                transaction.hset(keys.API_CLIENTS, name, json.dumps(record))
                transaction.set(keys.api_key(digest), name)
                transaction.execute()
            except redis.WatchError:
                return None  # another key was created (or revoked) meanwhile: the operator tries again
        return IssuedKey(_client_of(name, record), key)

    def authenticate(self, key: str) -> ApiClient | None:
        """The client a presented key belongs to, or ``None`` (unknown or revoked)."""
        name = self._client.get(keys.api_key(_sha256(key)))
        if name is None:
            return None
        return self.get(as_text(name))

    def get(self, name: str) -> ApiClient | None:
        """The client called ``name``, or ``None``."""
        raw = self._client.hget(keys.API_CLIENTS, name)
        return _client_of(name, json.loads(raw)) if raw is not None else None

    def all(self) -> list[ApiClient]:
        """Every client, by name."""
        stored = self._client.hgetall(keys.API_CLIENTS)
        clients = [_client_of(as_text(name), json.loads(raw)) for name, raw in stored.items()]
        return sorted(clients, key=lambda client: client.name)

    def revoke(self, name: str) -> bool:
        """Delete the client's key (its requests stay); ``False`` if there is no such client."""
        raw = self._client.hget(keys.API_CLIENTS, name)
        if raw is None:
            return False
        transaction = self._client.pipeline(transaction=True)
        transaction.delete(keys.api_key(json.loads(raw)["key_sha256"]))
        transaction.hdel(keys.API_CLIENTS, name)
        transaction.execute()
        return True


def new_key() -> str:
    """A fresh API key (256 random bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def _client_of(name: str, record: dict[str, str]) -> ApiClient:
    return ApiClient(name, record["callback_secret"], int(record["created_at_ms"]), record.get("team_id", ""))


def _sha256(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
