"""Approval requests for the benchmarks: one per synthetic session, as the runner would open them."""

import uuid
from datetime import datetime

from bot.domain.records import ApprovalRequest, PolicySummary, approval_id_for


def synthetic_request(
    index: int,
    *,
    policy: PolicySummary,
    created_at: datetime,
    input_bytes: int = 0,
    team_id: str = "T0BENCH",
    channel_id: str = "C0BENCH",
) -> ApprovalRequest:
    """The ``index``-th request: its own session (thread), a gated restart, asked by one requester.

    ``input_bytes``: the tool's input also carries that many bytes of content (a file an agent would write).
    """
    thread_ts = f"{1700000000 + index}.000100"
    session_id = f"{team_id}:{channel_id}:{thread_ts}"
    interrupt_id = f"v1:before_tool_call:tooluse_{index}:{uuid.uuid4()}"
    return ApprovalRequest(
        approval_id=approval_id_for(session_id, 1, interrupt_id),
        session_id=session_id,
        interrupt_id=interrupt_id,
        interrupt_name="approval",
        team_id=team_id,
        channel_id=channel_id,
        thread_ts=thread_ts,
        requested_by="U0REQUESTER",
        tool="restart_service",
        tool_input={"service": "checkout", **({"content": "x" * input_bytes} if input_bytes else {})},
        policy=policy,
        created_at=created_at,
    )
