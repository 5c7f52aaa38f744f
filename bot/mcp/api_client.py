"""A small client of the bot's HTTP API (``/v1/``), the only way the MCP server reaches the bot.

The MCP server runs where the agent runs (Claude Code in CI, a laptop): it needs the API's URL and a
key, never Redis or Slack credentials. Plain ``urllib``: no dependency beyond the standard library.
"""

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import quote

from bot.domain.errors import SignoffError

_TIMEOUT_MARGIN_S: Final = 15
_MAX_RETRY_AFTER_S: Final = 60.0
_PATHS: Final = {"approval": "/v1/approvals", "question": "/v1/questions"}


class ApiError(SignoffError):
    """The API refused a call (its message names the field at fault) or could not be reached.

    Attributes:
        status: The HTTP status, or 0 when the API could not be reached.
        retry_after_s: Seconds the API asked to wait before asking again (``Retry-After``), if it said.
    """

    def __init__(self, status: int, message: str, *, retry_after_s: float | None = None) -> None:
        """Keep the status, the API's message and its ``Retry-After``."""
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class SignoffApi:
    """Calls ``/v1/`` at ``base_url`` with ``key``."""

    base_url: str
    key: str

    def ask(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/approvals``: the request (new, or the one its idempotency key names)."""
        return self._call("POST", "/v1/approvals", body)

    def ask_question(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/questions``: the question (new, or the one its idempotency key names)."""
        return self._call("POST", "/v1/questions", body)

    def wait(
        self, request_id: str, *, wait_s: int, kind: Literal["approval", "question"] = "approval"
    ) -> dict[str, Any]:
        """``GET /v1/{approvals|questions}/{id}?wait=...``: the request once decided (answered), or after ``wait_s``."""
        path = f"{_PATHS[kind]}/{quote(request_id, safe='')}?wait={wait_s}s"
        return self._call("GET", path, timeout_s=wait_s)

    def cancel(self, request_id: str, *, kind: Literal["approval", "question"] = "approval") -> dict[str, Any]:
        """``POST /v1/{approvals|questions}/{id}/cancel``: withdraw it; one decided meanwhile is returned as it is."""
        try:
            return self._call("POST", f"{_PATHS[kind]}/{quote(request_id, safe='')}/cancel")
        except ApiError as error:
            if error.status != 409:
                raise
        return self.wait(request_id, wait_s=0, kind=kind)

    def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, timeout_s: int = 0
    ) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        request = urllib.request.Request(self.base_url.rstrip("/") + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout_s + _TIMEOUT_MARGIN_S) as response:
                return dict(json.loads(response.read()))
        except urllib.error.HTTPError as error:
            raise ApiError(error.code, _message_of(error), retry_after_s=_retry_after(error)) from None
        except (OSError, ValueError) as error:
            raise ApiError(0, f"the Signoff API at {self.base_url} cannot be reached: {error}") from None


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    try:
        return min(max(float(error.headers.get("Retry-After", "")), 0), _MAX_RETRY_AFTER_S)
    except ValueError:  # absent, or an HTTP date (Signoff sends seconds)
        return None


def _message_of(error: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(error.read())["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"the Signoff API answered {error.code}"
