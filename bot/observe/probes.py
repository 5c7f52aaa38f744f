"""``/readyz`` as a WSGI application: 200 when every readiness check passes, else 503 naming the ones that failed.

A check that passed degraded (Slack out of reach) answers 200 with status ``degraded``, naming it.

``/healthz`` (the process answers at all) stays in ``bot.slack.edge.http``: it must never depend on Redis or Slack.
"""

import json
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Any, Final

from bot.observe.readiness import Readiness

READY_PATH: Final = "/readyz"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def readiness_app(readiness: Readiness) -> WsgiApp:
    """Answer ``GET /readyz`` with ``{"status", "failed", "checks"}`` (each check: ``ok`` or what went wrong).

    ``degraded`` too, when a check passed degraded: the checks that did.
    """

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != READY_PATH or environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return _answer(start_response, 404, {"error": "not found"})
        results = readiness.check()
        failed = [result.name for result in results if result.failed]
        degraded = [result.name for result in results if result.degraded]
        body = {
            "status": "not ready" if failed else "degraded" if degraded else "ready",
            "failed": failed,
            **({"degraded": degraded} if degraded else {}),
            "checks": {result.name: result.detail for result in results},
        }
        return _answer(start_response, 503 if failed else 200, body)

    return application


def _answer(start_response: Callable[..., Any], status: int, body: dict[str, Any]) -> Iterable[bytes]:
    data = json.dumps(body).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data))), ("Cache-Control", "no-store")]
    start_response(f"{status} {HTTPStatus(status).phrase}", headers)
    return [data]
