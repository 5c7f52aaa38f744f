"""A loopback OpenTelemetry collector: receives OTLP/HTTP trace exports (protobuf, as the SDK's exporter sends
them) and keeps every span it was sent."""

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests.bot.support.http_server import in_background


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the collector received it (ids in hex, as a traceparent spells them)."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    scope: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    error: bool
    events: tuple[tuple[str, dict[str, Any]], ...]
    """Each event's name and attributes (Strands writes messages as events)."""

    def texts(self) -> str:
        """Every attribute value of the span and its events, as one text to search."""
        values = [*self.attributes.values(), *(value for _name, fields in self.events for value in fields.values())]
        return "\n".join(str(value) for value in values)


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@dataclass
class Collector:
    """What the collector received, and a wait for it."""

    url: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def receive(self, body: bytes) -> None:
        """Keep every span of one export request."""
        request = ExportTraceServiceRequest.FromString(body)
        received = []
        for resource_spans in request.resource_spans:
            resource = {item.key: _value(item.value) for item in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(
                        ReceivedSpan(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_span_id=span.parent_span_id.hex(),
                            scope=scope_spans.scope.name,
                            attributes={item.key: _value(item.value) for item in span.attributes},
                            resource=resource,
                            error=span.status.code == span.status.STATUS_CODE_ERROR,
                            events=tuple(
                                (event.name, {item.key: _value(item.value) for item in event.attributes})
                                for event in span.events
                            ),
                        )
                    )
        with self._changed:
            self.spans.extend(received)
            self._changed.notify_all()

    def wait_for(self, name: str, *, count: int = 1, timeout_s: float = 20) -> list[ReceivedSpan]:
        """The spans named ``name``, once there are ``count`` of them (fails after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                named = [span for span in self.spans if span.name == name]
                if len(named) >= count:
                    return named
                left = deadline - time.monotonic()
                assert left > 0, f"{name!r}: {len(named)} span(s) received, {count} expected; got {self.names()}"
                self._changed.wait(left)

    def names(self) -> list[str]:
        """Every span's name, in the order received."""
        with self._changed:
            return [span.name for span in self.spans]


@contextmanager
def otlp_collector() -> Iterator[Collector]:
    """A collector listening on a free loopback port until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            collector.receive(body)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: a test's output is not the place for every export."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    collector = Collector(url=f"http://127.0.0.1:{server.server_address[1]}")
    with in_background(server, "otlp-collector"):
        yield collector
