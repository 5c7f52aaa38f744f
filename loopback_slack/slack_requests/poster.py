"""Slack's requests encoded, signed and POSTed to an app's Request URL over real HTTP.

Encoded the way Slack does (events as JSON, interactions as ``payload=<json>`` form fields, commands as form fields)
and signed (``X-Slack-Signature: v0=HMAC-SHA256(secret, "v0:{ts}:{body}")``, with the current timestamp).
"""

import http.client
import json
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Final, NamedTuple, Self
from urllib.parse import urlencode, urlsplit

from slack_sdk.signature import SignatureVerifier

from loopback_slack.slack_requests.team import JsonDict

JSON: Final = "application/json"
FORM: Final = "application/x-www-form-urlencoded"
USER_AGENT: Final = "Slackbot 1.0 (+https://api.slack.com/robots)"


def encode_event(body: Mapping[str, Any]) -> bytes:
    """Events API bodies are compact JSON."""
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def encode_payload(payload: Mapping[str, Any]) -> bytes:
    """Interaction payloads are one form field, ``payload=<json>``."""
    return urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode("utf-8")


def encode_command(fields: Mapping[str, str]) -> bytes:
    """A slash command's body: its fields form-encoded."""
    return urlencode(dict(fields)).encode("utf-8")


def sign(signing_secret: str, timestamp: int | str, body: bytes) -> str:
    """``v0=`` + hex HMAC-SHA256 of ``v0:{timestamp}:{body}`` keyed with the signing secret (slack_sdk's signer)."""
    signature = SignatureVerifier(signing_secret).generate_signature(timestamp=str(timestamp), body=body)
    assert signature is not None  # None only without a timestamp
    return signature


class PostResult(NamedTuple):
    """What the app answered: its status, headers and body."""

    status: int
    headers: dict[str, str]  # lower-case names
    body: str

    def json(self) -> Any:
        """The body decoded as JSON (raises ``ValueError`` when it is not JSON)."""
        return json.loads(self.body)

    def json_object(self) -> JsonDict | None:
        """The body as a JSON object, or ``None`` when it is not one (an empty ack, say)."""
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


_RETRYABLE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class SignedPoster:
    """POSTs signed Slack requests to ``base_url`` + ``path`` (Bolt's default ``/slack/events``).

    One keep-alive ``http.client`` connection per thread is reused (reopened when the server closes it; wsgiref
    answers HTTP/1.0 and closes after every response, which ``http.client`` handles transparently).
    """

    def __init__(self, base_url: str, signing_secret: str, *, path: str = "/slack/events", timeout: float = 10) -> None:
        """Sign with ``signing_secret``; ``timeout`` is each request's, in seconds.

        Raises:
            ValueError: ``base_url`` is not an ``http://`` URL with a host.
        """
        split = urlsplit(base_url)
        if split.scheme != "http" or split.hostname is None:
            raise ValueError(f"expected an http:// base URL, got {base_url!r}")
        self.signing_secret = signing_secret
        self.host = split.hostname
        self.port = split.port or 80
        self.path = split.path.rstrip("/") + "/" + path.lstrip("/")
        self.timeout = timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[http.client.HTTPConnection] = []

    # -------------------------------------------------------------- the four kinds of request

    def post_event(self, body: Mapping[str, Any]) -> PostResult:
        """An Events API request (``event_callback``, ``url_verification``) as JSON."""
        return self.post_signed(encode_event(body), JSON)

    def post_action(self, payload: Mapping[str, Any]) -> PostResult:
        """A ``block_actions`` (or any interaction) payload as ``payload=<json>``."""
        return self.post_signed(encode_payload(payload), FORM)

    def post_view_submission(self, payload: Mapping[str, Any]) -> PostResult:
        """A ``view_submission`` payload as ``payload=<json>``."""
        return self.post_signed(encode_payload(payload), FORM)

    def post_command(self, fields: Mapping[str, str]) -> PostResult:
        """A slash command as form fields."""
        return self.post_signed(encode_command(fields), FORM)

    def post_signed(self, body: bytes, content_type: str) -> PostResult:
        """POST ``body`` as Slack would: its content type and user agent, signed with the current time."""
        timestamp = int(time.time())
        headers = {
            "Content-Type": content_type,
            "User-Agent": USER_AGENT,
            "X-Slack-Request-Timestamp": str(timestamp),
            "X-Slack-Signature": sign(self.signing_secret, timestamp, body),
        }
        return self.send(body, headers)

    # -------------------------------------------------------------- HTTP

    def send(self, body: bytes, headers: Mapping[str, str]) -> PostResult:
        """POST ``body`` with exactly ``headers`` (plus Host / Content-Length) on this thread's connection."""
        for attempt in range(2):
            connection = self._connection()
            try:
                connection.request("POST", self.path, body=body, headers=dict(headers))
                response = connection.getresponse()
                text = response.read().decode("utf-8", errors="replace")
            except _RETRYABLE:
                # A kept-alive connection the server had already closed: reopen once.
                connection.close()
                if attempt == 1:
                    raise
                continue
            if response.will_close:
                connection.close()  # reopened by http.client on the next request
            return PostResult(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
        raise AssertionError("unreachable")

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def close(self) -> None:
        """Close every thread's connection (a later request opens a new one)."""
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()
        self._local = threading.local()

    def __enter__(self) -> Self:
        """The poster itself; ``close`` runs on the way out."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Close every connection (``close``)."""
        self.close()
