"""A call and its answer: a call the fake received (as recorded), a method's answer, an HTTP reply, a Slack error."""

import json
from dataclasses import dataclass, field
from typing import Any, Final

JsonDict = dict[str, Any]

# The recorded pseudo-method for POSTs to a URL from ``LoopbackSlack.response_url``.
RESPONSE_URL_METHOD: Final = "response_url"


@dataclass(frozen=True)
class Call:
    """One request the fake received.

    ``args`` is fully parsed (query string and body merged; JSON-string fields such as ``blocks`` decoded);
    ``headers`` has lower-case names; ``at`` is ``time.monotonic()`` on arrival; ``status`` and ``response`` are what
    the fake answered (``response`` is the JSON body, ``{}`` when it was not JSON).
    """

    method: str
    args: JsonDict
    headers: dict[str, str]
    at: float
    status: int = 200
    response: JsonDict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the fake answered HTTP 200 with ``ok: true``."""
        return self.status == 200 and bool(self.response.get("ok"))

    @property
    def error(self) -> str | None:
        """The Slack error code the fake answered with, if any."""
        error = self.response.get("error")
        return str(error) if error is not None else None


@dataclass(frozen=True)
class Answer:
    """A Web API method's answer as the fake is about to send it; ``delay`` holds it back (the work is already done)."""

    status: int
    data: JsonDict
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Reply:
    """One HTTP answer of the fake's server; ``delay`` holds it back (the work is already done)."""

    status: int
    body: bytes
    content_type: str = "application/json; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def json(cls, status: int, data: JsonDict, *, headers: dict[str, str] | None = None, delay: float = 0.0) -> "Reply":
        """A JSON answer."""
        return cls(status, json.dumps(data).encode("utf-8"), headers=dict(headers or {}), delay=delay)

    @classmethod
    def text(cls, status: int, text: str, content_type: str = "text/plain; charset=utf-8") -> "Reply":
        """A plain-text answer."""
        return cls(status, text.encode("utf-8"), content_type=content_type)


class SlackError(Exception):
    """A Web API method fails with this Slack error code (answered as ``ok: false``)."""

    def __init__(self, error: str) -> None:
        """Fail with the Slack error code ``error``."""
        super().__init__(error)
        self.error = error
