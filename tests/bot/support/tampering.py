"""A poster that sends Slack's requests the way an attacker or a flaky network would: forged, aged, replayed, mangled.

``TamperingPoster`` is the product's ``SignedPoster`` (correctly signed requests, as the sandbox sends them) plus what
only tests do to the bot's Request URL: per request ``PostOptions`` (a forged or verbatim signature, an explicit or
stale timestamp, no signature at all, Slack's redelivery headers, extra headers), any raw body (``post_raw``), and the
last request again byte for byte (``replay``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final, NamedTuple, TypedDict, Unpack

from loopback_slack import slack_requests
from loopback_slack.slack_requests import PostResult, SignedPoster

__all__ = ["STALE_SECONDS", "PostOptions", "SentRequest", "TamperingPoster"]

STALE_SECONDS: Final = 10 * 60  # older than the 5 minutes slack_sdk's SignatureVerifier accepts
_JSON: Final = "application/json"
_FORM: Final = "application/x-www-form-urlencoded"


class PostOptions(TypedDict, total=False):
    """How to tamper with a request. Without options it is signed correctly with the current time."""

    forge: bool  # sign with a wrong secret
    stale: bool  # timestamp STALE_SECONDS in the past (signed correctly for that timestamp)
    timestamp: int  # an explicit X-Slack-Request-Timestamp (signed correctly for it)
    signature: str  # send this X-Slack-Signature verbatim
    unsigned: bool  # send neither signature nor timestamp header
    retry_num: int  # X-Slack-Retry-Num (with X-Slack-Retry-Reason), as on Slack's redeliveries
    retry_reason: str
    headers: Mapping[str, str]  # extra headers, last word


class SentRequest(NamedTuple):
    """Exactly what was sent, for ``TamperingPoster.replay``."""

    body: bytes
    headers: dict[str, str]


class TamperingPoster(SignedPoster):
    """``SignedPoster`` whose requests take ``PostOptions``, remembered (``last``) for ``replay``."""

    def __init__(self, base_url: str, signing_secret: str, *, path: str = "/slack/events", timeout: float = 10) -> None:
        super().__init__(base_url, signing_secret, path=path, timeout=timeout)
        self.last: SentRequest | None = None

    def post_event(self, body: Mapping[str, Any], **options: Unpack[PostOptions]) -> PostResult:
        return self.post_raw(slack_requests.encode_event(body), _JSON, **options)

    def post_action(self, payload: Mapping[str, Any], **options: Unpack[PostOptions]) -> PostResult:
        return self.post_raw(slack_requests.encode_payload(payload), _FORM, **options)

    def post_view_submission(self, payload: Mapping[str, Any], **options: Unpack[PostOptions]) -> PostResult:
        return self.post_raw(slack_requests.encode_payload(payload), _FORM, **options)

    def post_command(self, fields: Mapping[str, str], **options: Unpack[PostOptions]) -> PostResult:
        return self.post_raw(slack_requests.encode_command(fields), _FORM, **options)

    def post_signed(self, body: bytes, content_type: str) -> PostResult:
        return self.post_raw(body, content_type)

    def post_raw(self, body: bytes | str, content_type: str, **options: Unpack[PostOptions]) -> PostResult:
        """POST any body (e.g. malformed JSON or a form without ``payload``), signed per ``options``."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        headers = {"Content-Type": content_type, "User-Agent": slack_requests.USER_AGENT}
        headers.update(self._signature_headers(data, options))
        if "retry_num" in options:
            headers["X-Slack-Retry-Num"] = str(options["retry_num"])
            headers["X-Slack-Retry-Reason"] = options.get("retry_reason", "http_timeout")
        headers.update(options.get("headers", {}))
        self.last = SentRequest(data, headers)
        return self.send(data, headers)

    def replay(self, request: SentRequest | None = None) -> PostResult:
        """Send the last (or the given) request again, byte for byte: same body, timestamp and signature."""
        request = request or self.last
        if request is None:
            raise RuntimeError("nothing was sent yet")
        return self.send(request.body, request.headers)

    def _signature_headers(self, body: bytes, options: PostOptions) -> dict[str, str]:
        if options.get("unsigned"):
            return {}
        timestamp = options.get("timestamp", int(time.time()) - (STALE_SECONDS if options.get("stale") else 0))
        secret = self.signing_secret + "-forged" if options.get("forge") else self.signing_secret
        signature = options.get("signature", slack_requests.sign(secret, timestamp, body))
        return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": signature}
