"""Checks every HTTP request before Bolt sees it: size, signature, freshness, replay, shape.

Bolt parses the body before it verifies the signature, so a malformed body gets a 500 whoever
sent it, and it accepts an identical signed request again within its five-minute window.
This guard answers first, with a clear status: 413 too large, 401 unsigned, forged or stale,
409 replayed (the same signature seen before), 400 signed but malformed. A signed request that
cannot be checked for a replay because Redis is unreachable is refused as ``Unrecorded``: nothing
of it is recorded, and ``bot.slack.outage`` tells the person so.

It also works around a Bolt 1.30 parsing bug: any form body containing the text "payload" is
taken for an interaction payload, so ``/agent restart payload-api`` would be dropped. Once the
request is verified, such a slash command reaches Bolt with that text percent-encoded (the same
fields once decoded) and signed again with the same secret and timestamp.
"""

import hashlib
import hmac
import json
import re
import time
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, quote

import redis
from slack_sdk.signature import SignatureVerifier

from bot.store import keys

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
    """A genuine request refused because Redis is unreachable: answer it with ``bot.slack.outage``."""


class RequestGuard:
    """Verifies Slack's signature and refuses replays and malformed bodies."""

    def __init__(self, *, signing_secret: str, redis_client: redis.Redis) -> None:
        """Keep the secret and the Redis used to remember signatures."""
        self._secret = signing_secret.encode()
        self._verifier = SignatureVerifier(signing_secret)
        self._redis = redis_client

    def for_bolt(self, *, body: bytes, timestamp: str, signature: str, content_type: str) -> tuple[bytes, str]:
        """The body and signature to hand Bolt for a request that passed ``check``."""
        if content_type.startswith("application/json") or body.startswith(b"payload=") or b"payload" not in body:
            return body, signature  # JSON, an interaction payload, or nothing Bolt could mistake for one
        fields = parse_qsl(body.decode(), keep_blank_values=True)
        if any(name == "payload" for name, _value in fields):
            return body, signature  # a real interaction payload
        encoded = "&".join(f"{quote(name, safe='')}={_hide_payload(value)}" for name, value in fields).encode()
        resigned = hmac.new(self._secret, f"v0:{timestamp}:".encode() + encoded, hashlib.sha256).hexdigest()
        return encoded, f"v0={resigned}"

    def check(
        self, *, body: bytes, timestamp: str | None, signature: str | None, content_type: str
    ) -> Rejection | None:
        """``None`` if the request may go to Bolt, else why not."""
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
        # Counted from the request's timestamp, not from now: one timestamped ahead stays valid longer.
        remember_s = int(timestamp) + _ACCEPTED_SECONDS + _SEEN_MARGIN_SECONDS - int(time.time())
        try:
            first_time = self._redis.set(keys.seen_signature(signature), "1", nx=True, ex=max(remember_s, 1))
        except (redis.ConnectionError, redis.TimeoutError) as error:
            return Unrecorded(503, f"Redis is unreachable ({type(error).__name__}): nothing was recorded")
        if not first_time:
            return Rejection(409, "replayed request: this signature was already used")
        problem = _shape_problem(text, content_type)
        return Rejection(400, problem) if problem else None


def _hide_payload(value: str) -> str:
    return quote(value, safe="").replace("payload", "%70ayload")


def _shape_problem(text: str, content_type: str) -> str | None:
    # Form bodies are decoded (once) by Bolt; a payload it cannot read is answered 400 by bot.slack.http.
    if content_type.startswith("application/json"):
        return _json_object_problem(text, "body")
    if not text.strip() or "=" not in text:
        return "empty or unparseable form body"
    return None


def _json_object_problem(text: str, what: str) -> str | None:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return f"malformed {what}: not JSON ({error.msg} at position {error.pos})"
    except RecursionError:
        return f"malformed {what}: nested too deeply"
    if not isinstance(value, dict):
        return f"malformed {what}: expected a JSON object"
    return None
