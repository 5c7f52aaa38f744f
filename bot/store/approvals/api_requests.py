"""Requests made through the HTTP API, one record per request under its session's hash tag.

The record is written once (``HSETNX``): a retry with the same idempotency key finds the first one.
Two marks follow it: ``cancelled`` (the client withdrew it) and ``notified`` (its callback was delivered).
"""

import logging
from dataclasses import dataclass

import redis
from pydantic import ValidationError

from bot.domain.api_requests import ApiRequestRecord
from bot.store import keys
from state.text import as_text

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredApiRequest:
    """A stored request and its marks."""

    record: ApiRequestRecord
    cancelled: bool = False
    notified: bool = False


class ApiRequestStore:
    """Reads and writes the records of requests made through the API."""

    def __init__(self, client: redis.Redis) -> None:
        """Keep the client."""
        self._client = client

    def create(self, record: ApiRequestRecord) -> StoredApiRequest | None:
        """Keep ``record``; ``None`` when it is new, else the request already stored under its id."""
        key = keys.api_request(record.session_id)
        if self._client.hsetnx(key, "record", record.model_dump_json()):
            return None
        return self.get(record.session_id)

    def get(self, session_id: str) -> StoredApiRequest | None:
        """The request of an API session, or ``None`` (unknown, expired, or unreadable: logged)."""
        fields = self._client.hgetall(keys.api_request(session_id))
        decoded = {as_text(name): as_text(value) for name, value in fields.items()}
        if "record" not in decoded:
            return None
        try:
            record = ApiRequestRecord.model_validate_json(decoded["record"])
        except ValidationError as error:
            logger.error("session_id=<%s> | stored API request is unreadable: %s", session_id, error)
            return None
        return StoredApiRequest(record, cancelled="cancelled" in decoded, notified="notified" in decoded)

    def mark_cancelled(self, session_id: str) -> None:
        """Record that the client withdrew the request (its approval was decided as a withdrawal)."""
        self._client.hset(keys.api_request(session_id), "cancelled", "1")

    def mark_notified(self, session_id: str) -> None:
        """Record that the callback got the decision (a redelivered job does not send it again)."""
        self._client.hset(keys.api_request(session_id), "notified", "1")

    def expire(self, session_id: str, *, after_s: int) -> None:
        """Let the record go with its round, ``after_s`` from now."""
        self._client.expire(keys.api_request(session_id), after_s)
