"""Ask Signoff for a sign-off (or a person for an answer) and wait: the HTTP API in ~70 lines of standard library.

Copy it into your agent's code base: it needs nothing but the API's URL and a key
(``python -m bot api-key create --name <your agent>``).
"""

import json
import time
import urllib.error
import urllib.request
from typing import Any


def ask_and_wait(api_url: str, api_key: str, ask: dict[str, Any], *, timeout_s: float = 3600) -> dict[str, Any]:
    """Post ``ask`` and return the request once decided.

    ``ask`` holds ``tool``, ``input``, ``reason``, ``channel``, ``idempotency_key``...; the returned request's
    ``status`` is approved, denied, expired or cancelled, its ``decision`` says who, when and why.

    A timeout withdraws the request (``cancelled``). Pass an ``idempotency_key``: a retry after a crash then finds
    the same request instead of asking twice. A wait the server refuses (429: it holds its most waits) or that a
    restart cuts is asked again after ``Retry-After``; any other refusal raises ``urllib.error.HTTPError``.
    """
    return _ask_and_wait(api_url, api_key, "/v1/approvals", ask, timeout_s)


def ask_question_and_wait(
    api_url: str, api_key: str, question: dict[str, Any], *, timeout_s: float = 3600
) -> dict[str, Any]:
    """Ask a person ``question`` and return it once answered (or expired, or withdrawn).

    ``question`` holds ``question`` (the text), then ``options`` (labels, or ``{"label", "description"}``) with
    ``multiple``, or ``schema`` (a form), or neither (words); and ``channel``, ``requester``, ``idempotency_key``...
    The returned question's ``status`` is answered, expired, cancelled or refused; its ``answer`` is the words, the
    label chosen, the labels chosen (``multiple``) or the form's object. Timeouts and retries as ``ask_and_wait``.
    """
    return _ask_and_wait(api_url, api_key, "/v1/questions", question, timeout_s)


def _ask_and_wait(api_url: str, api_key: str, path: str, body: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    request = _call(api_url, api_key, "POST", path, body)
    deadline = time.monotonic() + timeout_s
    while request["status"] == "pending":
        left = int(deadline - time.monotonic())
        if left <= 0:
            return _withdraw(api_url, api_key, f"{path}/{request['id']}")
        try:
            request = _call(api_url, api_key, "GET", f"{path}/{request['id']}?wait={min(left, 30)}s")
        except urllib.error.HTTPError as error:
            if error.code != 429 and error.code < 500:
                raise  # refused (a revoked key, an unknown id): asking again cannot help
            time.sleep(_retry_after(error))  # 429: the server holds its most waits; 5xx: it restarts
        except (urllib.error.URLError, ConnectionError):
            time.sleep(1)  # the web process restarts: the request is kept, ask again
    return request


def _withdraw(api_url: str, api_key: str, at: str) -> dict[str, Any]:
    """Withdraw the request at ``at``; one decided (answered) just before is returned as it is (409 to withdraw)."""
    try:
        return _call(api_url, api_key, "POST", f"{at}/cancel")
    except urllib.error.HTTPError as error:
        if error.code != 409:
            raise
    return _call(api_url, api_key, "GET", at)


def _retry_after(error: urllib.error.HTTPError) -> float:
    try:
        return min(max(float(error.headers.get("Retry-After", 1)), 0), 60)
    except ValueError:  # an HTTP date: not sent by Signoff
        return 1


def _call(api_url: str, api_key: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    request = urllib.request.Request(api_url.rstrip("/") + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return dict(json.loads(response.read()))
