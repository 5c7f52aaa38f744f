"""Ask Signoff for a sign-off and wait for the decision: the HTTP API in ~40 lines of standard library.

Copy it into your agent's code base: it needs nothing but the API's URL and a key
(``python -m bot api-key create --name <your agent>``).
"""

import json
import time
import urllib.error
import urllib.request
from typing import Any


def ask_and_wait(api_url: str, api_key: str, ask: dict[str, Any], *, timeout_s: float = 3600) -> dict[str, Any]:
    """Post ``ask`` (``tool``, ``input``, ``reason``, ``channel``, ``idempotency_key``...) and return the request
    once decided: ``status`` is approved, denied, expired or cancelled, ``decision`` says who, when and why.

    A timeout withdraws the request (``cancelled``). Pass an ``idempotency_key``: a retry after a crash then finds
    the same request instead of asking twice.
    """
    request = _call(api_url, api_key, "POST", "/v1/approvals", ask)
    deadline = time.monotonic() + timeout_s
    while request["status"] == "pending":
        left = int(deadline - time.monotonic())
        if left <= 0:
            return _call(api_url, api_key, "POST", f"/v1/approvals/{request['id']}/cancel")
        try:
            request = _call(api_url, api_key, "GET", f"/v1/approvals/{request['id']}?wait={min(left, 30)}s")
        except (urllib.error.URLError, ConnectionError):
            time.sleep(1)  # the web process restarts: the request is kept, ask again
    return request


def _call(api_url: str, api_key: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    request = urllib.request.Request(api_url.rstrip("/") + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return dict(json.loads(response.read()))
