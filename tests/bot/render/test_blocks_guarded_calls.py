"""The approval message names the tool call(s) an interrupt guards, or says none could be determined."""

import json
from datetime import UTC, datetime

from bot.domain.records import ApprovalRequest, GuardedCall, PolicySummary, approval_id_for
from bot.render import blocks
from bot.render.texts import approval_request

SID = "T1:C1:1700000000.000100"


def _request(calls: tuple[GuardedCall, ...], *, interrupt_name: str = "batch-approval") -> ApprovalRequest:
    single = calls[0] if len(calls) == 1 else None
    return ApprovalRequest(
        approval_id=approval_id_for(SID, 3, "v1:before_tools:x"),
        session_id=SID,
        interrupt_id="v1:before_tools:x",
        interrupt_name=interrupt_name,
        team_id="T1",
        channel_id="C1",
        thread_ts="1700000000.000100",
        requested_by="U0REQUESTER",
        tool=single.tool if single else None,
        tool_input=single.input if single else None,
        tool_use_id=single.tool_use_id if single else None,
        calls=calls,
        reason="Run this batch?",
        policy=PolicySummary(name="deletions"),
        created_at=datetime(2026, 11, 30, 5, 0, tzinfo=UTC),
    )


def _text(request: ApprovalRequest) -> str:
    return json.dumps(blocks.approval_message(request)["blocks"])


DELETE = GuardedCall(tool="delete_files", input={"paths": ["/tmp/a"]}, tool_use_id="t1")
INSPECT = GuardedCall(tool="inspect_files", input={"paths": ["/tmp/b"]}, tool_use_id="t2")


def test_one_guarded_call_is_named_with_its_arguments() -> None:
    text = _text(_request((DELETE,)))
    assert "Approval needed: delete_files" in text
    assert "/tmp/a" in text
    assert "could not be determined" not in text


def test_a_batch_names_every_call_and_its_arguments() -> None:
    text = _text(_request((DELETE, INSPECT)))
    assert "Approval needed: delete_files, inspect_files" in text
    assert "/tmp/a" in text
    assert "/tmp/b" in text
    assert json.dumps(approval_request.CALLS_LABEL)[1:-1] in text


def test_an_interrupt_guarding_no_known_call_says_so() -> None:
    text = _text(_request((), interrupt_name="run-approval"))
    assert 'Approval needed"' in text
    assert "could not be determined" in text
    assert "`run-approval`" in text
