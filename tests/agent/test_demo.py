"""The demonstration operations agent: free reads, gated risky actions, plain requests."""

import pytest

from agent.demo import RISKY_TOOLS, build_operations_agent
from state import SessionStore
from tests.agent.support import decision, respond


def test_reading_logs_needs_no_approval() -> None:
    result = build_operations_agent()("logs for checkout")
    assert result.stop_reason == "end_turn"
    assert "POST /pay 502" in str(result)


@pytest.mark.parametrize(
    ("request_text", "tool_name", "tool_input", "outcome"),
    [
        ("restart checkout", "restart_service", {"service": "checkout"}, "checkout: 3 replicas restarted"),
        ("Scale search to 5", "scale_service", {"service": "search", "replicas": 5}, "scaled from 2 to 5"),
        ("roll back payments", "rollback_deploy", {"service": "payments"}, "rolled back from v8 to v7"),
    ],
)
def test_risky_requests_wait_for_approval_then_run(
    store: SessionStore, request_text: str, tool_name: str, tool_input: dict[str, object], outcome: str
) -> None:
    assert tool_name in RISKY_TOOLS
    stopped = build_operations_agent(session_id="demo-1", store=store)(request_text)
    [interrupt] = stopped.interrupts
    assert interrupt.reason["tool"] == tool_name
    assert interrupt.reason["input"] == tool_input

    resumed = build_operations_agent(session_id="demo-1", store=store)([respond(interrupt.id, decision("approve"))])

    assert outcome in str(resumed)


def test_unknown_services_and_requests_get_a_helpful_answer() -> None:
    agent = build_operations_agent()
    assert "unknown service 'billing'" in str(agent("logs for billing"))
    assert "Try 'restart checkout'" in str(agent("make me a sandwich"))
