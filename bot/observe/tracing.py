"""OpenTelemetry traces: one trace from a request in Slack to the agent's reply.

A mention (or ``/agent``) opens the trace. Its context travels as a W3C ``traceparent`` wherever the work goes
next: in the start job's fields on the jobs stream, in every outbox entry queued meanwhile, in each approval of
the round the agent raised. A decision (a click, a modal, a typed reply, the API, an expiry) continues the trace
of its approval, and the resume job and message updates it queues continue the decision's. So the worker's job,
the agent's run (a Strands agent's own spans are children of it), the approval messages' posts, the click and
the reply all hang in one tree, across processes and Redis.

Only the OpenTelemetry API is a dependency, and without an SDK every span is a no-op: nothing is read to find a
parent (``enabled``). ``bot.observe.trace_export`` installs the SDK with an OTLP/HTTP exporter when an endpoint
is set (the ``otel`` extra). A process without one still passes on a context it was given (a job queued by a
process that traces): its outbox entries and approvals carry it, its JSON log lines name it.
"""

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Final

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

logger = logging.getLogger(__name__)

TRACER_NAME: Final = "signoff"
TRACE_FIELD: Final = "traceparent"
"""The field that carries a trace context in what the bot stores: a job, an outbox entry, an approval."""
ENDPOINT_VARIABLES: Final = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_TRACEPARENT: Final = re.compile(r"00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}")
_propagator: Final = TraceContextTextMapPropagator()
_tracer: Final = trace.get_tracer(TRACER_NAME)  # a proxy until a provider is installed, then that provider's

Attributes = Mapping[str, str | int | bool]


def current_traceparent() -> str:
    """The W3C ``traceparent`` of the span current in this thread ("" when there is none, or tracing is off)."""
    if not trace.get_current_span().get_span_context().is_valid:
        return ""
    carrier: dict[str, str] = {}
    _propagator.inject(carrier)
    return carrier.get("traceparent", "")


def valid_traceparent(value: object) -> str:
    """``value`` if it is a well-formed version-00 ``traceparent``, else "" (stored data is never trusted)."""
    return value if isinstance(value, str) and _TRACEPARENT.fullmatch(value) else ""


def enabled() -> bool:
    """Whether spans are recorded: a real tracer provider is installed (then a parent is worth a read to find)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider | trace.NoOpTracerProvider)


@contextmanager
def span(
    name: str,
    *,
    parent: str = "",
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: Attributes | None = None,
) -> Iterator[Span]:
    """Run the block in a new current span.

    The span is the child of ``parent`` (a ``traceparent``) when it names one, else of the current span (a new
    trace when there is none). An exception leaving the block marks the span failed and is recorded on it
    (then raised on).
    """
    if not valid_traceparent(parent):
        if not enabled():
            # Nothing to record and no context to pass on: a no-op span would carry the current span's context, so the
            # current span stands in for it (a click's answer does not wait for a context set to what it was).
            yield trace.get_current_span()
            return
        parent_context = None
    else:
        parent_context = _propagator.extract({"traceparent": parent})
    with _tracer.start_as_current_span(name, context=parent_context, kind=kind, attributes=attributes) as current:
        yield current


def failed(current: Span, why: str, error: BaseException | None = None) -> None:
    """Mark ``current`` failed (Slack refused, a job will be retried), with the exception that made it fail."""
    if error is not None:
        current.record_exception(error)
    current.set_status(Status(StatusCode.ERROR, why))


def current_failed(why: str, error: BaseException | None = None) -> None:
    """Mark the current span failed (a no-op outside a recorded span)."""
    failed(trace.get_current_span(), why, error)


def name_part(value: str, known: Iterable[str]) -> str:
    """``value`` for a span name if it is one of ``known``, else ``other``: stored data never names a span."""
    return value if value in frozenset(known) else "other"  # an enum's members; ``in`` an enum class raises


def log_ids() -> dict[str, str]:
    """The current trace and span ids, for a log line (empty outside a span)."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}
