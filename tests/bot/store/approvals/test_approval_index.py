"""The approvals' indexes per workspace, named approver and person: written with the records, read a bounded page.

Others' thousands cost a workspace's and a person's reads nothing (round trips counted on the wire), never push
their own out, and an entry whose record is gone is skipped and removed.
"""

import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import redis
from redis.cluster import RedisCluster

from bench.round_trips import RoundTrips
from bot.domain.records import Decision, PolicySummary
from bot.domain.status import Status
from bot.store import keys
from bot.store.approvals import approval_index
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.decide_call import RECENT_KEPT, Attempt
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, update_approval
from tests.bot.support.approval_requests import SID, an_approval_request
from tests.bot.support.crowd import other_approvals
from tests.redis_targets import on_both

pytest_generate_tests = on_both

TEAM, LEAD = "T0TEST", "U0LEAD"


def _counting(redis_url: str, redis_target: str) -> tuple[redis.Redis, RoundTrips]:
    """A client of the target whose writes to the server are counted (a pipeline: one per node it reaches)."""
    trips = RoundTrips()

    class _Counting(redis.Connection):
        def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            trips.count += 1
            super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]

    if redis_target == "cluster":
        return cast(redis.Redis, RedisCluster.from_url(redis_url, connection_class=_Counting)), trips
    return redis.Redis(connection_pool=redis.ConnectionPool.from_url(redis_url, connection_class=_Counting)), trips


def _open_own(store: ApprovalStore, count: int) -> list[str]:
    requests = [
        an_approval_request(
            interrupt_id=f"v1:before_tool_call:tooluse_{index}:x",
            approval_id=keys.approval_id(SID, f"own{index}"),
            policy=PolicySummary(name="default", approver_users=(LEAD,)),
            created_at=datetime(2026, 11, 30, 12, tzinfo=UTC) + timedelta(seconds=index),
        )
        for index in range(count)
    ]
    store.open_round(session_id=SID, version=4, requests=requests)
    return [request.approval_id for request in requests]


def _decide(
    store: ApprovalStore, redis_client: redis.Redis, approval_id: str, *, user: str = "U0APPROVER", after_s: int = 0
) -> Status:
    decided_at = datetime.now(UTC) + timedelta(seconds=after_s)
    result = store.decide(
        Attempt(SID, approval_id, "approve", user, TEAM, "C0OPS", None),
        decision=Decision(decision="approve", decided_by=user, decided_at=decided_at),
        update=Outbox.script_entry(update_approval(SID, approval_id), due_ms=0),
        audit=Audit(redis_client).script_events(("vote", "decision")),
    )
    return result.status


def _reads(store: ApprovalStore) -> tuple[list[str], ...]:
    return tuple(
        [approval.request.approval_id for approval in page]
        for page in (
            store.open_in_workspace(TEAM, limit=20),
            store.open_for_approver(TEAM, LEAD, limit=20),
            store.decided_in_workspace(TEAM, limit=20),
            store.decided_for(TEAM, "U0REQUESTER", limit=20),
        )
    )


def test_a_workspace_s_and_a_person_s_pages_cost_the_same_whatever_others_hold(
    redis_client: redis.Redis, redis_url: str, redis_target: str
) -> None:
    client, trips = _counting(redis_url, redis_target)
    store = ApprovalStore(client)
    own = _open_own(store, 6)
    for approval_id in own[:3]:
        assert _decide(store, redis_client, approval_id) is Status.DECIDED
    store.open_in_workspace(TEAM, limit=1)  # connections made and scripts loaded before counting
    before = trips.count
    alone = _reads(store)
    cost_alone = trips.count - before

    other_approvals(redis_client, 2_000)
    other_approvals(redis_client, 2_000, decided_at=datetime.now(UTC) + timedelta(hours=1))
    before = trips.count
    crowded = _reads(store)
    cost_crowded = trips.count - before

    assert crowded == alone == (own[3:], own[3:], own[:3][::-1], own[:3][::-1])
    assert cost_crowded == cost_alone, "others' approvals cost a workspace's reads nothing"
    client.close()


def test_entries_come_with_the_publish_and_go_with_the_decision_in_the_same_step(redis_client: redis.Redis) -> None:
    store = ApprovalStore(redis_client)
    transaction = redis_client.pipeline(transaction=True)
    [approval_id] = _open_own_in(store, transaction)
    assert _reads(store) == ([], [], [], []), "nothing listed before the publish transaction runs"
    transaction.execute()
    assert _reads(store) == ([approval_id], [approval_id], [], [])

    channels = store.channels_waiting(TEAM)
    assert [a.request.approval_id for a in store.open_in_channels(TEAM, channels, limit=5)] == [approval_id]

    assert _decide(store, redis_client, approval_id, user="U0APPROVER") is Status.DECIDED
    assert _reads(store) == ([], [], [approval_id], [approval_id])
    assert store.open_in_channels(TEAM, channels, limit=5) == []
    assert store.channels_waiting(TEAM) == {}, "a channel where nothing waits leaves the list once read empty"
    assert store.decided_for(TEAM, LEAD, limit=5) == [], "a named approver who did not decide has no entry"
    assert redis_client.hget(keys.approval(SID, approval_id), "indexed") is None, "its open entries' list goes"


def _open_own_in(store: ApprovalStore, transaction: redis.client.Pipeline) -> list[str]:
    request = an_approval_request(
        approval_id=keys.approval_id(SID, "own0"), policy=PolicySummary(name="default", approver_users=(LEAD,))
    )
    store.open_round(session_id=SID, version=4, requests=[request], pipeline=transaction)
    return [request.approval_id]


def test_an_entry_whose_record_is_gone_is_skipped_and_removed(redis_client: redis.Redis) -> None:
    store = ApprovalStore(redis_client)
    gone, kept = _open_own(store, 2)
    redis_client.delete(keys.approval(SID, gone), keys.approval_session(keys.shard_of(SID), gone))  # its TTL ran out
    assert [approval.request.approval_id for approval in store.open_in_workspace(TEAM, limit=5)] == [kept]
    assert [approval.request.approval_id for approval in store.open_for_approver(TEAM, LEAD, limit=5)] == [kept]
    assert [m for m in redis_client.zrange(keys.open_by(keys.shard_of(SID)), 0, -1) if gone.encode() in m] == []


def test_a_person_s_recent_decisions_are_kept_per_person_and_trimmed(redis_client: redis.Redis) -> None:
    store = ApprovalStore(redis_client)
    own = _open_own(store, 3)
    other_approvals(redis_client, 300, decided_at=datetime.now(UTC) + timedelta(hours=1), team_id=TEAM)
    for approval_id in own:
        _decide(store, redis_client, approval_id)
    mine = [approval.request.approval_id for approval in store.decided_for(TEAM, "U0REQUESTER", limit=10)]
    assert mine == own[::-1], "300 later decisions of the same workspace by others never push a person's out"


def test_the_decide_script_trims_each_list_to_its_newest(redis_client: redis.Redis) -> None:
    store = ApprovalStore(redis_client)
    own = _open_own(store, 2 * RECENT_KEPT + 10)
    for index, approval_id in enumerate(own):
        assert _decide(store, redis_client, approval_id, after_s=index) is Status.DECIDED
    members: list[bytes] = redis_client.zrange(keys.recent_by(keys.shard_of(SID)), 0, -1)  # type: ignore[assignment]
    for prefix in (b"w:T0TEST:", b"p:T0TEST:U0REQUESTER:"):
        kept = [member for member in members if member.startswith(prefix)]
        assert RECENT_KEPT <= len(kept) < 2 * RECENT_KEPT
    newest = [approval.request.approval_id for approval in store.decided_in_workspace(TEAM, limit=RECENT_KEPT)]
    assert newest == own[::-1][:RECENT_KEPT]


def test_an_approval_names_its_open_entries_in_few_bytes_and_one_listed_whole_before_still_goes(
    redis_client: redis.Redis,
) -> None:
    store = ApprovalStore(redis_client)
    compact, whole = _open_own(store, 2)
    listed: list[bytes] = redis_client.zrange(keys.open_by(keys.shard_of(SID)), 0, -1)  # type: ignore[assignment]
    members = [member.decode() for member in listed if whole.encode() in member]
    assert len(members) == 3  # the workspace's, its named approver's, its rule's
    recorded = redis_client.hget(keys.approval(SID, compact), approval_index.OPEN_FIELD)
    assert recorded is not None
    assert len(recorded) < 0.6 * len(json.dumps(members))  # the time and the id once
    redis_client.hset(keys.approval(SID, whole), approval_index.OPEN_FIELD, json.dumps(members))  # as written before

    for approval_id in (compact, whole):
        assert _decide(store, redis_client, approval_id) is Status.DECIDED
    assert redis_client.zrange(keys.open_by(keys.shard_of(SID)), 0, -1) == []
