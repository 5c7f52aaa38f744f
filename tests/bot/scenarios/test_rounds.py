"""Invariant 2 (one round): approval ids name the round, and a stored approval is never overwritten."""

import json
from datetime import UTC, datetime

import redis

from bot.domain.records import ApprovalRequest, Decision, approval_id_for
from bot.store import keys
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.decide_call import Attempt
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, update_approval
from tests.bot.support import shards
from tests.bot.support.agents import two_gates_agent
from tests.bot.support.approval_requests import SID, an_approval_request
from tests.bot.support.harness import running_bot

BATCH_ID = "v1:before_tools:0a4f2c8e-5b1d-5d3e-9a7c-1f2e3d4c5b6a"  # the same for every batch of a session


def _request(version: int, *, tool: str = "delete_files") -> ApprovalRequest:
    return an_approval_request(
        approval_id=approval_id_for(SID, version, BATCH_ID),
        interrupt_id=BATCH_ID,
        interrupt_name="batch-approval",
        tool=tool,
    )


def test_the_same_interrupt_id_in_two_rounds_gets_two_approval_ids() -> None:
    assert approval_id_for(SID, 4, BATCH_ID) != approval_id_for(SID, 9, BATCH_ID)
    assert approval_id_for(SID, 4, BATCH_ID) == approval_id_for(SID, 4, BATCH_ID)


def test_a_decided_approval_is_never_overwritten_nor_opened_again(redis_client: redis.Redis) -> None:
    approvals = ApprovalStore(redis_client)
    first = _request(4)
    assert approvals.open_round(session_id=SID, version=4, requests=[first]) == [first]
    decision = Decision(decision="approve", decided_by="U0APPROVER", decided_at=datetime.now(UTC))
    redis_client.hset(keys.approval(SID, first.approval_id), "decision", decision.model_dump_json())
    redis_client.srem(keys.open_approvals(SID), first.approval_id)

    # The same round published again (a redelivered job), with a request that differs.
    again = _request(4, tool="inspect_files")
    assert approvals.open_round(session_id=SID, version=4, requests=[again]) == []

    stored = approvals.get(SID, first.approval_id)
    assert stored is not None
    assert stored.request.tool == "delete_files"
    assert stored.decision == decision
    assert approvals.open_ids(SID) == set()


def test_a_new_round_with_a_reused_interrupt_id_is_a_new_open_approval(redis_client: redis.Redis) -> None:
    approvals = ApprovalStore(redis_client)
    approvals.open_round(session_id=SID, version=4, requests=[_request(4)])
    second = _request(9)
    assert approvals.open_round(session_id=SID, version=9, requests=[second]) == [second]
    assert approvals.open_ids(SID) == {second.approval_id}
    version, [current] = approvals.round_approvals(SID)
    assert (version, current.request.approval_id, current.decision) == (9, second.approval_id, None)


def test_the_same_round_published_again_keeps_its_approvals_and_gains_new_ones(redis_client: redis.Redis) -> None:
    approvals = ApprovalStore(redis_client)
    first = _request(4)
    approvals.open_round(session_id=SID, version=4, requests=[first])
    other = first.model_copy(
        update={"interrupt_id": "v1:tool_call:t2:x", "approval_id": approval_id_for(SID, 4, "v1:tool_call:t2:x")}
    )
    assert approvals.open_round(session_id=SID, version=4, requests=[other]) == [other]
    _version, stored = approvals.round_approvals(SID)
    assert [approval.request.approval_id for approval in stored] == [first.approval_id, other.approval_id]
    assert approvals.open_ids(SID) == {first.approval_id, other.approval_id}


def test_an_undecided_approval_of_an_earlier_round_can_decide_nothing(redis_client: redis.Redis) -> None:
    approvals = ApprovalStore(redis_client)
    old = _request(4)
    approvals.open_round(session_id=SID, version=4, requests=[old])
    approvals.open_round(session_id=SID, version=9, requests=[_request(9)])  # round 4 is over
    stale = approvals.get(SID, old.approval_id)
    assert stale is not None
    decision = Decision(decision="approve", decided_by="U0APPROVER", decided_at=datetime.now(UTC))
    jobs_before = shards.jobs_queued(redis_client)

    result = approvals.decide(
        Attempt(SID, old.approval_id, "approve", "U0APPROVER", "T0TEST", "C0OPS", origin=None),
        decision=decision,
        update=Outbox.script_entry(update_approval(SID, old.approval_id), due_ms=0),
        audit=Audit(redis_client).script_events(("vote", "decision")),
    )

    assert result.status == "unknown"
    after = approvals.get(SID, old.approval_id)
    assert after is not None
    assert after.decision is None
    assert (shards.jobs_queued(redis_client)) == jobs_before


def test_approvals_published_late_into_their_round_leave_the_round_waiting(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=two_gates_agent) as bot:
        bot.mention("restart api and search")
        bot.drain()
        first, lost = bot.approval_id(0), bot.approval_id(1)
        session_id = bot.services.stores.approvals.session_of(first)
        assert session_id is not None
        # As if only part of the round had been published before a crash.
        redis_client.hset(keys.round_(session_id), "approvals", json.dumps([first]))
        redis_client.srem(keys.open_approvals(session_id), lost)
        redis_client.delete(keys.approval(session_id, lost))

        bot.mention("status?", thread_ts=session_id.rsplit(":", 1)[1])  # recovers what was not published
        bot.drain()

        _version, stored = bot.services.stores.approvals.round_approvals(session_id)
        assert [approval.request.approval_id for approval in stored] == [first, lost]
        assert bot.services.stores.approvals.open_ids(session_id) == {first, lost}
        for approval_id in (first, lost):
            assert redis_client.ttl(keys.approval(session_id, approval_id)) == -1  # waiting: never expires
