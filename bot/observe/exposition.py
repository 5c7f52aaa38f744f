"""``/metrics``: the Prometheus text format of this process (or, under gunicorn, of all its workers added up).

With ``PROMETHEUS_MULTIPROC_DIR`` set (the Procfile's gunicorn config sets it), each process writes its counts
to files there and a scrape of any worker reads them all (``prometheus_client.multiprocess``); without it, the
process's own registry is served. Either way the state in Redis is read at scrape time (``StateCollector``).
"""

import os
from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from typing import Any, Final

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

METRICS_PATH: Final = "/metrics"
MULTIPROC_DIR: Final = "PROMETHEUS_MULTIPROC_DIR"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _ThisProcess(Collector):
    """The default registry's metrics, served beside the state collector in one scrape."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def scrape(state: Collector | None) -> bytes:
    """One scrape's answer: this process's (or every worker's) metrics and, if given, the state in Redis."""
    registry = CollectorRegistry()
    # The state first: the Redis errors its reads count are then in this very answer.
    if state is not None:
        registry.register(state)
    if os.environ.get(MULTIPROC_DIR):
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_ThisProcess())
    return generate_latest(registry)


def metrics_app(state: Collector | None) -> WsgiApp:
    """Answer ``GET /metrics``."""

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != METRICS_PATH or environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        data = scrape(state)
        start_response(
            f"200 {HTTPStatus.OK.phrase}", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(data)))]
        )
        return [data]

    return application
