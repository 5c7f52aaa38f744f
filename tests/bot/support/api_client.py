"""A client of the bot's HTTP API over real HTTP (httpx), as an agent elsewhere would call it."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from bot.services import Services
from tests.bot.support.people import CHANNEL, REQUESTER

DEPLOY = {"tool": "restart_service", "input": {"service": "checkout"}, "channel": CHANNEL, "requester": REQUESTER}
"""A request the default policy lets anyone but the requester approve."""
REGION = {
    "question": "Which region?",
    "options": ["eu-west-1", "us-east-1"],
    "channel": CHANNEL,
    "requester": REQUESTER,
}
"""A question of options the default policy lets the requester answer."""


class ApiCaller:
    """Calls ``/v1/`` with one API key."""

    def __init__(self, base_url: str, key: str | None) -> None:
        """Talk to ``base_url`` (the web process) as the holder of ``key`` (``None``: no Authorization header)."""
        headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=70)

    def ask(self, body: dict[str, Any] | None = None, **fields: Any) -> httpx.Response:
        """``POST /v1/approvals`` with ``body`` (default: ``DEPLOY``) updated by ``fields``."""
        return self.http.post("/v1/approvals", json={**(DEPLOY if body is None else body), **fields})

    def get(self, request_id: str, *, wait: str | None = None) -> httpx.Response:
        """``GET /v1/approvals/{id}``, long-polling with ``wait``."""
        params = {"wait": wait} if wait is not None else {}
        return self.http.get(f"/v1/approvals/{request_id}", params=params)

    def cancel(self, request_id: str) -> httpx.Response:
        """``POST /v1/approvals/{id}/cancel``."""
        return self.http.post(f"/v1/approvals/{request_id}/cancel")

    def ask_question(self, body: dict[str, Any] | None = None, **fields: Any) -> httpx.Response:
        """``POST /v1/questions`` with ``body`` (default: ``REGION``) updated by ``fields``."""
        return self.http.post("/v1/questions", json={**(REGION if body is None else body), **fields})

    def get_question(self, request_id: str, *, wait: str | None = None) -> httpx.Response:
        """``GET /v1/questions/{id}``, long-polling with ``wait``."""
        params = {"wait": wait} if wait is not None else {}
        return self.http.get(f"/v1/questions/{request_id}", params=params)

    def cancel_question(self, request_id: str) -> httpx.Response:
        """``POST /v1/questions/{id}/cancel``."""
        return self.http.post(f"/v1/questions/{request_id}/cancel")

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()


@contextmanager
def api_caller(services: Services, base_url: str, *, name: str = "ci-runner") -> Iterator[ApiCaller]:
    """An API key created for ``name`` and a caller holding it."""
    issued = services.stores.api_keys.create(name)
    assert issued is not None
    caller = ApiCaller(base_url, issued.key)
    try:
        yield caller
    finally:
        caller.close()


def until_waits_held(services: Services, count: int, *, timeout_s: float = 10) -> None:
    """Return once the web process holds exactly ``count`` long-polls (``API_MAX_WAITS`` slots taken)."""
    deadline = time.monotonic() + timeout_s
    while services.api_waits.in_use != count:
        assert time.monotonic() < deadline, f"{services.api_waits.in_use} long-polls held, never {count}"
        time.sleep(0.01)
