"""What the worker serves on ``METRICS_PORT``: ``/metrics`` (Prometheus) and ``/healthz`` (its loops' liveness).

``/healthz`` answers 200 while each of its loops keeps stepping, else 503 naming the hung ones: an HTTP liveness probe
for platforms that prefer one to ``python -m bot worker-health``.
"""

import json
from collections.abc import Callable, Iterable
from typing import Any, Final

from prometheus_client.registry import Collector

from bot.observe.exposition import METRICS_PATH, WsgiApp, metrics_app

HEALTH_PATH: Final = "/healthz"


def worker_wsgi_app(*, stalled_loops: Callable[[], list[str]], state: Collector | None) -> WsgiApp:
    """``/metrics`` and ``/healthz`` of a worker (``stalled_loops``: the loops that stopped stepping)."""
    metrics = metrics_app(state)

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == METRICS_PATH:
            return metrics(environ, start_response)
        if environ.get("PATH_INFO") != HEALTH_PATH:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        stalled = stalled_loops()
        body = json.dumps({"status": "hung" if stalled else "alive", "stalled": stalled}).encode()
        start_response(
            "503 Service Unavailable" if stalled else "200 OK",
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
        )
        return [body]

    return application
