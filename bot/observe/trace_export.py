"""Sending spans: OpenTelemetry's SDK with an OTLP/HTTP exporter, installed once per process.

The SDK and the exporter are the ``otel`` extra; they are imported only here, and only when a process starts
with an OTLP endpoint set. Platforms often set ``OTEL_EXPORTER_OTLP_ENDPOINT`` for every container, so an
endpoint without the extra, or with OpenTelemetry's own switches off (``OTEL_SDK_DISABLED=true``,
``OTEL_TRACES_EXPORTER=none``) or another protocol than ``http/protobuf``, leaves traces off with one
warning instead of stopping the bot. The exporter reads OpenTelemetry's own variables (``OTEL_EXPORTER_OTLP_*``);
the service is ``OTEL_SERVICE_NAME`` or the ``service.name`` of ``OTEL_RESOURCE_ATTRIBUTES``, else ``signoff``;
each span's resource says which process sent it (``signoff.process``: the command, ``web`` under gunicorn).
Spans go out in batches from a thread of their own (``OTEL_BSP_SCHEDULE_DELAY``, 5 s by default), and the rest
are sent when the process ends.

A Strands agent's spans carry the conversation and each tool's input and output unless redaction is asked for
(Strands' ``gen_ai_unredacted_attributes=<list>`` token of ``OTEL_SEMCONV_STABILITY_OPT_IN``): a tool call that
waits for a person may hold what only that person should see, so unless the variable names the token, the bot
adds it empty (redact every sensitive attribute).
"""

import importlib.util
import logging
import os
from typing import Final

from opentelemetry import trace

logger = logging.getLogger(__name__)

_FLUSH_MS: Final = 5_000  # under gunicorn's graceful timeout (30 s), even with the collector gone
_REDACTION: Final = "gen_ai_unredacted_attributes="
_OPT_IN: Final = "OTEL_SEMCONV_STABILITY_OPT_IN"


def sdk_installed() -> bool:
    """Whether the ``otel`` extra (the SDK and its OTLP/HTTP exporter) is installed (found, not imported)."""
    try:
        return all(
            importlib.util.find_spec(name) is not None
            for name in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")
        )
    except ModuleNotFoundError:  # a parent package is missing
        return False


def why_off() -> str | None:
    """Why an endpoint is set but no span can be sent from here, or ``None`` when they can."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return "OTEL_SDK_DISABLED is true"
    if os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() != "otlp":
        return f"OTEL_TRACES_EXPORTER is {os.environ['OTEL_TRACES_EXPORTER']!r}, not otlp"
    for variable in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        protocol = os.environ.get(variable, "").strip()
        if protocol:
            if protocol != "http/protobuf":
                return f"{variable} is {protocol!r}: the bot sends OTLP over HTTP (http/protobuf) only"
            break
    if not sdk_installed():
        return "OpenTelemetry's SDK is not installed: pip install 'signoff[otel]'"
    return None


def install(process: str) -> bool:
    """Send this process's spans to the configured OTLP endpoint; return whether they are sent.

    Nothing changes if a tracer provider is set already: the application that embeds the bot chose its own.
    """
    off = why_off()
    if off is not None:
        logger.warning("an OTLP endpoint is set, but traces stay off: %s", off)
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415 the extra
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        logger.info("a tracer provider is installed already: spans go where it sends them")
        return True
    if _REDACTION not in os.environ.get(_OPT_IN, ""):
        os.environ[_OPT_IN] = ",".join(filter(None, (os.environ.get(_OPT_IN, ""), _REDACTION)))
    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name" in OTELResourceDetector().detect().attributes
    resource = Resource.create({**({} if named else {"service.name": "signoff"}), "signoff.process": process})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    logger.info("process=<%s> | traces are sent over OTLP/HTTP", process)
    return True


def flush() -> None:
    """Send the spans still waiting, within a few seconds (a process about to end: gunicorn's worker exit)."""
    provider = trace.get_tracer_provider()
    force_flush = getattr(provider, "force_flush", None)
    if force_flush is not None:
        force_flush(timeout_millis=_FLUSH_MS)
