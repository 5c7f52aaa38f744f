"""A request is stored without its repeats and defaults, reads back exactly, and one stored whole still reads."""

from typing import Any

import redis

from bot.domain.records import ApprovalRequest, GuardedCall
from bot.store import keys
from bot.store.approvals.approval_record import request_from, stored_request
from bot.store.approvals.approvals import ApprovalStore
from tests.bot.support.approval_requests import SID, an_approval_request
from tests.redis_targets import on_both

pytest_generate_tests = on_both

_INPUT: dict[str, Any] = {
    "service": "checkout",
    "force": None,
    "count": 1,
    "flags": [True, None, {}],
    "note": "caf\u00e9 \u202e",
}
_SCHEMA = {"type": "object", "properties": {"service": {"type": "string"}}}


def _tool_gate(**changes: Any) -> ApprovalRequest:
    fields: dict[str, Any] = {
        "tool_input": _INPUT,
        "tool_use_id": "tooluse_0",
        "calls": (GuardedCall(tool="restart_service", input=_INPUT, tool_use_id="tooluse_0"),),
        "input_schema": _SCHEMA,
        # As the agent gives it: the call again, under its own names, in its own order.
        "reason": {"tool": "restart_service", "input": _INPUT, "toolUseId": "tooluse_0", "inputSchema": _SCHEMA},
    }
    return an_approval_request(**(fields | changes))


def test_a_request_is_stored_once_and_reads_back_exactly() -> None:
    request = _tool_gate()
    stored = stored_request(request)
    assert len(stored) < len(request.model_dump_json()) / 2
    assert stored.count('"checkout"') == 1, "the tool's input is stored once"
    assert request_from(stored).model_dump_json() == request.model_dump_json()

    # What only looks like a repeat is kept: 1 is not true, another call is another call.
    differing = _tool_gate(
        reason={"input": _INPUT | {"count": True}, "toolUseId": "tooluse_0"},
        calls=(GuardedCall(tool="restart_service", input=_INPUT, tool_use_id="tooluse_9"),),
    )
    assert request_from(stored_request(differing)).model_dump_json() == differing.model_dump_json()
    assert request_from(differing.model_dump_json()) == differing


def test_a_request_stored_whole_before_still_reads(redis_client: redis.Redis) -> None:
    store = ApprovalStore(redis_client)
    new, old = _tool_gate(), _tool_gate(approval_id=keys.approval_id(SID, "old0"), interrupt_id="v1:old")
    store.open_round(session_id=SID, version=4, requests=[new, old])
    redis_client.hset(keys.approval(SID, old.approval_id), "request", old.model_dump_json())  # the previous version's

    for request in (new, old):
        approval = store.get(SID, request.approval_id)
        assert approval is not None
        assert approval.request.model_dump_json() == request.model_dump_json()
