"""Sending spans: OpenTelemetry's SDK with an OTLP/HTTP exporter, installed once per process.

The SDK and the exporter are the ``otel`` extra; they are imported only here, and only when a process starts
with an OTLP endpoint set (``bot.settings`` refuses one set without them). The exporter reads
OpenTelemetry's own variables (``OTEL_EXPORTER_OTLP_*``); the service is ``OTEL_SERVICE_NAME``, else
``signoff``, and each span's resource says which process sent it (``signoff.process``: web, worker, socket,
sandbox). Spans go out in batches from a thread of their own (``OTEL_BSP_SCHEDULE_DELAY``, 5 s by default),
and the rest are sent when the process ends.
"""

import logging
import os

from opentelemetry import trace

logger = logging.getLogger(__name__)


def sdk_installed() -> bool:
    """Whether the ``otel`` extra (the SDK and its OTLP/HTTP exporter) can be imported."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: PLC0415 only to see it is there
        import opentelemetry.sdk.trace  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


def install(process: str) -> None:
    """Send this process's spans to the configured OTLP endpoint.

    Nothing changes if a tracer provider is set already: the application that embeds the bot chose its own.
    """
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415 the extra
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        logger.info("a tracer provider is installed already: spans go where it sends them")
        return
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "signoff"}
    provider = TracerProvider(resource=Resource.create({**named, "signoff.process": process}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    logger.info("process=<%s> | traces are sent over OTLP/HTTP", process)


def flush() -> None:
    """Send the spans still waiting (a process about to end: gunicorn's worker exit)."""
    provider = trace.get_tracer_provider()
    force_flush = getattr(provider, "force_flush", None)
    if force_flush is not None:
        force_flush()
