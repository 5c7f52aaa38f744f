"""Traces as production sends them: the Procfile's gunicorn and ``python -m bot worker``, each exporting over
OTLP/HTTP to a collector, give one trace from the mention to the agent's reply. Its context crosses processes
through Redis: the start job, the approval, the decision's resume job and every outbox entry carry it."""

import sys
from typing import Any

import pytest

from bench.serving import free_port, wait_healthy
from loopback_slack import slack_requests
from loopback_slack.slack_requests import SignedPoster
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import SIGNING_SECRET
from tests.bot.support.otlp_collector import ReceivedSpan, otlp_collector
from tests.bot.support.people import CHANNEL, CHANNEL_MEMBERS, PEOPLE, REQUESTER
from tests.bot.support.web_processes import bot_settings, click_approve, process, web_command

DEMO = ""  # the default AGENT_FACTORY: our own runtime
STRANDS = "tests.strands.agents:strands_operations_agent"


def _one(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    [span] = [span for span in spans if span.name == name]
    return span


def _ancestors(span: ReceivedSpan, spans: list[ReceivedSpan]) -> list[str]:
    by_id = {span.span_id: span for span in spans}
    names = []
    while span.parent_span_id in by_id:
        span = by_id[span.parent_span_id]
        names.append(span.name)
    return names


@pytest.mark.single_redis  # processes of their own; the Redis layout is not what this checks
@pytest.mark.parametrize("agent_factory", [DEMO, STRANDS], ids=["signoff", "strands"])
def test_one_trace_runs_from_the_mention_through_the_click_to_the_reply(redis_url: str, agent_factory: str) -> None:
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with otlp_collector() as collector, FakeSlack(users=users, channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        port = free_port()
        chosen = {"AGENT_FACTORY": agent_factory} if agent_factory else {}
        settings = bot_settings(
            slack, redis_url, OTEL_EXPORTER_OTLP_ENDPOINT=collector.url, OTEL_BSP_SCHEDULE_DELAY="50", **chosen
        )
        with (
            process([sys.executable, "-m", "bot", "worker"], settings),
            process(web_command(port, workers=2), settings) as web,
        ):
            wait_healthy(port, [web])
            event = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
            with SignedPoster(f"http://127.0.0.1:{port}/", SIGNING_SECRET) as poster:
                assert poster.post_event(event).status == 200
            slack.wait_for("chat.postMessage", timeout=30)
            click_approve(port, slack)
            try:
                slack.wait_for("chat.postMessage", count=2, timeout=30)  # the agent's reply
            except AssertionError as error:
                raise AssertionError(f"no reply; the clicker was told {slack.ephemerals()}") from error
            collector.wait_for("job resume")
            collector.wait_for("outbox post_message")
            collector.wait_for("outbox update_approval")

    mention = collector.wait_for("slack app_mention")[0]
    trace = [span for span in collector.spans if span.trace_id == mention.trace_id]
    start, resume = _one(trace, "job start"), _one(trace, "job resume")
    decide, posted = _one(trace, "decide approve"), _one(trace, "outbox post_approval")
    updated, reply = _one(trace, "outbox update_approval"), _one(trace, "outbox post_message")

    assert mention.parent_span_id == ""  # the mention opens the trace
    assert start.parent_span_id == mention.span_id  # through the jobs stream, web -> worker
    assert posted.parent_span_id == start.span_id  # through the outbox
    assert decide.parent_span_id == start.span_id  # the click continues the run that raised the approval
    assert resume.parent_span_id == decide.span_id  # the resume job the decide script queued, web -> worker
    assert updated.parent_span_id == decide.span_id
    assert reply.parent_span_id == resume.span_id
    assert {span.resource["signoff.process"] for span in (mention, decide)} == {"web"}
    assert {span.resource["signoff.process"] for span in (start, resume, posted, reply)} == {"worker"}
    assert {span.resource["service.name"] for span in trace} == {"signoff"}
    assert decide.attributes["signoff.decision.source"] == "button"
    assert decide.attributes["signoff.decision.status"] == "decided"
    assert start.attributes["signoff.job.outcome"] == resume.attributes["signoff.job.outcome"] == "done"
    assert not any(span.error for span in trace)

    strands_spans = [span for span in trace if span.scope.startswith("strands")]
    if agent_factory == STRANDS:
        _assert_strands_joined(strands_spans, trace)
    else:
        assert not strands_spans


def _assert_strands_joined(strands_spans: list[ReceivedSpan], trace: list[ReceivedSpan]) -> None:
    """Strands' own spans (the agent, its cycles, the model, the tool) join the jobs that ran them, redacted."""
    assert strands_spans, f"no Strands span in the trace: {[span.name for span in trace]}"
    tools = [span for span in strands_spans if "restart_service" in span.name]
    assert tools, [span.name for span in strands_spans]
    assert "job resume" in _ancestors(tools[0], trace)  # the approved tool ran on resume
    assert all(_ancestors(span, trace)[-1] == "slack app_mention" for span in strands_spans)
    # What the person typed and the tool's input stay out of the collector (Strands' redaction, on by default).
    sent = "\n".join(span.texts() for span in strands_spans)
    assert "[REDACTED]" in sent
    assert "restart checkout" not in sent  # the prompt
    assert "replicas restarted" not in sent  # the tool's result
    assert '"service": "checkout"' not in sent
