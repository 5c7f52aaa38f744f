"""Checks every HTTP request before anything acts on it: size, signature, freshness, replay, shape.

The guard is the one verifier at the edge (Bolt's own request verification is off): 413 too
large, 401 unsigned, forged or stale, 409 replayed (the same signature seen before), 400 signed
but malformed. A signed request that cannot be checked for a replay because Redis is unreachable
is refused as ``Unrecorded``: nothing of it is recorded, and ``bot.slack.edge.outage`` tells the person so.

The body is decoded once (``read_request``) and handed to Bolt decoded. That also avoids a Bolt
1.30 parsing bug: Bolt takes any form body containing the text "payload" for an interaction
payload, so ``/agent restart payload-api`` would be dropped; here only a field named ``payload`` is one.
"""

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Final

import redis
from slack_sdk.signature import SignatureVerifier

from bot.slack.edge.form_body import form_fields
from bot.store.signatures import SeenSignatures

MAX_BODY_BYTES: Final = 1 << 20
# A signature is accepted while its timestamp is within five minutes of now, before or after:
# it is remembered until its timestamp is five minutes (and a margin for clock steps) in the past.
_ACCEPTED_SECONDS: Final = 300
_SEEN_MARGIN_SECONDS: Final = 60
_TIMESTAMP: Final = re.compile(r"[0-9]{1,12}")
_SIGNATURE: Final = re.compile(r"v0=[0-9a-f]{64}")


@dataclass(frozen=True)
class Rejection:
    """Why a request is refused: the HTTP status and a short message."""

    status: int
    message: str


@dataclass(frozen=True)
class Unrecorded(Rejection):
    """A genuine request refused because Redis is unreachable: answer it with ``bot.slack.edge.outage``."""


REPLAYED: Final = Rejection(409, "replayed request: this signature was already used")


def unrecorded(error: Exception) -> Unrecorded:
    """The refusal of a request Redis could not record."""
    return Unrecorded(503, f"Redis is unreachable ({type(error).__name__}): nothing was recorded")


class RequestGuard:
    """Verifies Slack's signature and refuses replays."""

    def __init__(self, *, signing_secret: str, redis_client: redis.Redis) -> None:
        """Keep the secret and the Redis used to remember signatures."""
        self._verifier = SignatureVerifier(signing_secret)
        self._signatures = SeenSignatures(redis_client)

    def verify(self, *, body: bytes, timestamp: str | None, signature: str | None) -> Rejection | None:
        """``None`` if Slack signed ``body`` recently, else why not (the replay check is ``remember``)."""
        if len(body) > MAX_BODY_BYTES:
            return Rejection(413, "request body too large")
        if not timestamp or not signature:
            return Rejection(401, "missing Slack signature headers")
        if not _TIMESTAMP.fullmatch(timestamp):
            return Rejection(401, "malformed X-Slack-Request-Timestamp: expected Unix time in seconds")
        if not _SIGNATURE.fullmatch(signature):
            return Rejection(401, "malformed X-Slack-Signature: expected v0= and 64 hexadecimal digits")
        text = body.decode("utf-8", errors="replace")
        if not self._verifier.is_valid(body=text, timestamp=timestamp, signature=signature):
            return Rejection(401, "invalid or expired Slack signature")
        return None

    @staticmethod
    def remember_s(timestamp: str) -> int:
        """How long a verified signature must be remembered to refuse its replays.

        Counted from the request's timestamp, not from now: one timestamped ahead stays valid longer.
        """
        return max(int(timestamp) + _ACCEPTED_SECONDS + _SEEN_MARGIN_SECONDS - int(time.time()), 1)

    def remember(self, *, signature: str, timestamp: str) -> Rejection | None:
        """Record a verified signature as used: ``None`` the first time, else 409 (a replay) or ``Unrecorded``."""
        try:
            first_time = self._signatures.first(signature, remember_s=self.remember_s(timestamp))
        except (redis.ConnectionError, redis.TimeoutError) as error:
            return unrecorded(error)
        return None if first_time else REPLAYED


def read_request(text: str, content_type: str) -> dict[str, Any] | str:
    """The request's fields, decoded once: a JSON body, an interaction's ``payload`` or a form; else a 400's message."""
    if content_type.startswith("application/json"):
        return _json_object(text, "body")
    if not text.strip() or "=" not in text:
        return "empty or unparseable form body"
    fields = form_fields(text)
    if "payload" in fields:
        return _json_object(fields["payload"], "payload")
    return fields


def _json_object(text: str, what: str) -> dict[str, Any] | str:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return f"malformed {what}: not JSON ({error.msg} at position {error.pos})"
    except RecursionError:
        return f"malformed {what}: nested too deeply"
    if not isinstance(value, dict):
        return f"malformed {what}: expected a JSON object"
    return value
