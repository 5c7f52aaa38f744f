"""Trace context: what carries it (jobs, outbox entries, log lines) and what a stored one must look like."""

import json
import logging
from collections.abc import Iterator

import pytest
import redis
from opentelemetry import context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from bot.observe import trace_export, tracing
from bot.observe.logs import JsonFormatter
from bot.settings import ConfigError, load_log_settings
from bot.store import keys
from bot.store.approvals.approvals import ApprovalStore
from bot.store.queues.jobs import Job, JobKind, ResumeJob, StartJob
from bot.store.queues.outbox import OutboxEntry, post_message
from tests.bot.support.approval_requests import an_approval_request

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture
def in_a_span() -> Iterator[None]:
    """A current span with known ids (what a recording span of the SDK would be, without installing one)."""
    context = SpanContext(TRACE_ID, SPAN_ID, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    with trace.use_span(NonRecordingSpan(context)):
        yield


@pytest.mark.parametrize(
    "value",
    [
        TRACEPARENT.upper(),  # the format is lower-case hex
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # a version this reader does not know
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # an invalid trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # an invalid span id
        TRACEPARENT + "-extra",
        "",
        None,
        42,
    ],
)
def test_a_malformed_traceparent_is_none(value: object) -> None:
    assert tracing.valid_traceparent(value) == ""


def test_the_current_span_is_what_travels(in_a_span: None) -> None:
    assert tracing.valid_traceparent(TRACEPARENT) == TRACEPARENT
    assert tracing.current_traceparent() == TRACEPARENT
    assert tracing.log_ids() == {"trace_id": f"{TRACE_ID:032x}", "span_id": f"{SPAN_ID:016x}"}


def test_outside_a_span_nothing_travels() -> None:
    assert tracing.current_traceparent() == ""
    assert tracing.log_ids() == {}
    assert "traceparent" not in StartJob("T1", "C1", "1.2", "U1", "hi", "Ev1").fields()
    assert "traceparent" not in json.loads(post_message("C1", "hi", team_id="T1").to_json())


def test_a_span_while_nothing_traces_leaves_the_context_as_it_is(in_a_span: None) -> None:
    # Nothing to record and no parent to pass on: the block runs in the context it was given (a click's answer does
    # not wait for a context to be set and reset), and the trace it runs in still travels.
    before = context.get_current()
    with tracing.span("decide approve", attributes={"signoff.decision.source": "button"}) as current:
        assert context.get_current() is before
        current.set_attribute("signoff.decision.status", "decided")
        assert tracing.current_traceparent() == TRACEPARENT


def test_a_span_given_a_parent_while_nothing_traces_passes_the_parent_on() -> None:
    with tracing.span("decide approve", parent=TRACEPARENT):
        assert tracing.current_traceparent() == TRACEPARENT
    assert tracing.current_traceparent() == ""


def test_a_job_queued_in_a_span_carries_it(in_a_span: None) -> None:
    start = StartJob("T1", "C1", "1.2", "U1", "hi", "Ev1").fields()
    resume = ResumeJob("T1:C1:1.2", 3).fields()
    assert start["traceparent"] == resume["traceparent"] == TRACEPARENT
    assert Job("0/1-0", start).traceparent == TRACEPARENT
    assert Job("0/1-0", start).record() == StartJob("T1", "C1", "1.2", "U1", "hi", "Ev1")
    assert Job("0/1-0", {**resume, "traceparent": "forged"}).traceparent == ""
    assert Job("0/1-0", {**resume, "traceparent": "forged"}).problem() is None  # telemetry never blocks a job


def test_an_outbox_entry_keeps_its_trace_and_drops_a_malformed_one(in_a_span: None) -> None:
    entry = post_message("C1", "hi", team_id="T1")
    stored = entry.to_json()
    assert OutboxEntry.from_json(entry.entry_id, stored).traceparent == TRACEPARENT
    mangled = json.dumps({**json.loads(stored), "traceparent": ["not", "text"]})
    restored = OutboxEntry.from_json(entry.entry_id, mangled)
    assert (restored.traceparent, restored.payload) == ("", entry.payload)


def test_a_json_log_line_names_its_trace(in_a_span: None) -> None:
    record = logging.LogRecord("signoff.test", logging.INFO, __file__, 1, "decided", None, None)
    line = json.loads(JsonFormatter().format(record))
    assert (line["trace_id"], line["span_id"]) == (f"{TRACE_ID:032x}", f"{SPAN_ID:016x}")


@pytest.mark.parametrize("variable", ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
@pytest.mark.parametrize("value", ["ftp://collector:4318", "collector:4318", "http://"])
def test_a_collector_that_is_no_http_url_is_named(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=f"{variable}: .*http:// or https:// URL"):
        load_log_settings()


def test_a_collector_url_turns_traces_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert not load_log_settings().traces
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318")
    assert load_log_settings().traces


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("OTEL_SDK_DISABLED", "TRUE", "OTEL_SDK_DISABLED"),
        ("OTEL_TRACES_EXPORTER", "none", "OTEL_TRACES_EXPORTER"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json", "http/protobuf"),
    ],
)
def test_opentelemetry_s_own_switches_leave_traces_off(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, named: str
) -> None:
    for cleared in ("OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        monkeypatch.delenv(cleared, raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", raising=False)
    assert trace_export.why_off() is None  # the otel extra is installed here
    monkeypatch.setenv(variable, value)
    assert named in (trace_export.why_off() or "")
    assert trace_export.install("worker") is False  # and nothing was installed
    assert not tracing.enabled()


def test_stored_kinds_never_name_a_span() -> None:
    assert tracing.name_part("resume", JobKind) == "resume"
    assert tracing.name_part("resume\ud800", JobKind) == "other"


def test_a_corrupted_stored_trace_is_none(redis_client: redis.Redis) -> None:
    session_id, approval_id = "T1:C1:1.2", "T1:C1:1.2:v1:tool-1"
    approvals = ApprovalStore(redis_client)
    assert approvals.traceparent_of(session_id, approval_id) == ""
    redis_client.hset(keys.approval(session_id, approval_id), "traceparent", b"\xff\xfe" + TRACEPARENT.encode())
    assert approvals.traceparent_of(session_id, approval_id) == ""
    redis_client.hset(keys.approval(session_id, approval_id), "traceparent", TRACEPARENT)
    assert approvals.traceparent_of(session_id, approval_id) == TRACEPARENT


def test_an_approval_raised_in_a_span_is_read_back_with_its_trace(redis_client: redis.Redis, in_a_span: None) -> None:
    approvals = ApprovalStore(redis_client)
    request = an_approval_request()
    approvals.open_round(session_id=request.session_id, version=4, requests=[request])
    stored = approvals.get(request.session_id, request.approval_id)
    assert stored is not None
    assert stored.traceparent == approvals.traceparent_of(request.session_id, request.approval_id) == TRACEPARENT
    redis_client.hset(keys.approval(request.session_id, request.approval_id), "traceparent", "forged")
    forged = approvals.get(request.session_id, request.approval_id)
    assert forged is not None
    assert forged.traceparent == ""  # a malformed one is none, and the approval stays readable
