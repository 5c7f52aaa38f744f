"""An approval request for tests that need one without a bot to ask: a gated ``restart_service`` in #ops."""

from datetime import UTC, datetime
from typing import Any

from bot.domain.records import ApprovalRequest, PolicySummary, approval_id_for

SID = "T0TEST:C0OPS:1700000000.000300"


def an_approval_request(*, interrupt_id: str = "v1:before_tool_call:tooluse_0:x", **changes: Any) -> ApprovalRequest:
    """A pending request in session ``SID`` under the default policy, with ``changes`` made to its fields.

    Its ``approval_id`` is the one round 4 of the session gives ``interrupt_id``, unless ``changes`` names one.
    """
    fields: dict[str, Any] = {
        "approval_id": approval_id_for(SID, 4, interrupt_id),
        "session_id": SID,
        "interrupt_id": interrupt_id,
        "interrupt_name": "approval",
        "team_id": "T0TEST",
        "channel_id": "C0OPS",
        "thread_ts": "1700000000.000300",
        "requested_by": "U0REQUESTER",
        "tool": "restart_service",
        "policy": PolicySummary(name="default"),
        "created_at": datetime(2026, 11, 30, 12, 0, tzinfo=UTC),
    }
    fields.update(changes)
    return ApprovalRequest(**fields)
