"""``migrate --indexes`` (and the worker's start) lists the records stored before the indexes: once, idempotently,
never a decided request as waiting; a build cut short is done again."""

from datetime import UTC, datetime, timedelta

import pytest
import redis

from bot.cli import migrate as migrate_cli
from bot.domain.grants import Grant, call_digest
from bot.domain.records import Decision, PolicySummary
from bot.store import keys
from bot.store.approvals import index_build
from bot.store.approvals.decide_call import Attempt
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, update_approval
from bot.store.stores import Stores
from tests.bot.support.approval_requests import SID, an_approval_request
from tests.redis_targets import on_both

pytest_generate_tests = on_both

TEAM, LEAD = "T0TEST", "U0LEAD"


def _records_without_indexes(stores: Stores) -> tuple[str, str]:
    """A waiting and a decided approval, a grant and an org's note, then every index of theirs taken away."""
    requests = [
        an_approval_request(
            interrupt_id=f"v1:before_tool_call:tooluse_{index}:x",
            approval_id=keys.approval_id(SID, f"old{index}"),
            policy=PolicySummary(name="default", approver_users=(LEAD,)),
        )
        for index in range(2)
    ]
    stores.approvals.open_round(session_id=SID, version=4, requests=requests)
    waiting, decided = (request.approval_id for request in requests)
    stores.approvals.decide(
        Attempt(SID, decided, "approve", "U0APPROVER", TEAM, "C0OPS", None),
        decision=Decision(decision="approve", decided_by="U0APPROVER", decided_at=datetime.now(UTC)),
        update=Outbox.script_entry(update_approval(SID, decided), due_ms=0),
        audit=Audit(stores.redis).script_events(("vote", "decision")),
    )
    now = datetime.now(UTC)
    stores.grants.create(
        Grant(
            grant_id="g1", team_id=TEAM, channel_id="C0OPS", rule="restarts", tool="restart_service",
            tool_input={}, digest=call_digest("restart_service", {}, client=None), terms="t", requester=None,
            granted_by=LEAD, granted_at=now, expires_at=now + timedelta(hours=1), approval_id=waiting,
            granted_ms=int(now.timestamp() * 1000),
        )
    )  # fmt: skip
    stores.installations.remember_org(TEAM, "E0ORG")
    client = stores.redis
    for shard in keys.shards():
        client.delete(keys.open_by(shard), keys.recent_by(shard), keys.open_channels(shard, TEAM))
    client.hdel(keys.approval(SID, waiting), "indexed")
    client.zadd(keys.recent_decisions(keys.shard_of(SID)), {decided: 1})  # the previous versions' list of decisions
    client.delete(keys.grants_of(TEAM, LEAD), keys.installation_org_teams("E0ORG"), keys.INDEXES_BUILT)
    return waiting, decided


def _views(stores: Stores) -> tuple[list[str], ...]:
    approvals = stores.approvals
    return (
        [approval.request.approval_id for approval in approvals.open_in_workspace(TEAM, limit=10)],
        [approval.request.approval_id for approval in approvals.open_for_approver(TEAM, LEAD, limit=10)],
        [approval.request.approval_id for approval in approvals.decided_in_workspace(TEAM, limit=10)],
        [grant.grant_id for grant, *_ in stores.grants.live_of(TEAM, LEAD, now_ms=0)],
        sorted(stores.installations.org_teams("E0ORG")),
    )


def test_the_build_lists_what_was_stored_before_the_indexes_once(redis_client: redis.Redis) -> None:
    stores = Stores.on(redis_client)
    waiting, decided = _records_without_indexes(stores)
    assert _views(stores) == ([], [], [], [], [])

    listed = index_build.build(stores)
    assert listed == {"waiting approvals": 1, "recent decisions": 1, "grants": 1, "org workspaces": 1}
    assert _views(stores) == ([waiting], [waiting], [decided], ["g1"], [TEAM])
    assert stores.approvals.channels_waiting(TEAM) == {"C0OPS": [keys.shard_of(SID)]}
    assert not redis_client.exists(keys.recent_decisions(keys.shard_of(SID))), "the old list goes once listed"
    assert index_build.build(stores) == dict.fromkeys(listed, 0), "a second run finds nothing more to list"
    assert index_build.ensure(stores) is None, "the worker's start: one read once built"

    # Listed exactly as a publish lists it: its decision takes it out.
    stores.approvals.decide(
        Attempt(SID, waiting, "deny", "U0APPROVER", TEAM, "C0OPS", None),
        decision=Decision(decision="deny", decided_by="U0APPROVER", decided_at=datetime.now(UTC)),
        update=Outbox.script_entry(update_approval(SID, waiting), due_ms=0),
        audit=Audit(redis_client).script_events(("vote", "decision")),
    )
    assert _views(stores)[:2] == ([], [])


def test_a_build_cut_short_is_done_again_at_the_next_start(redis_client: redis.Redis) -> None:
    stores = Stores.on(redis_client)
    waiting, _decided = _records_without_indexes(stores)
    stores.approvals.index_existing(keys.shard_of(SID))  # killed after one step: no marker
    assert not index_build.built(stores)
    assert index_build.ensure(stores) is not None
    assert index_build.built(stores)
    assert _views(stores)[0] == [waiting]


@pytest.mark.single_redis
def test_the_command_builds_them(redis_client: redis.Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    stores = Stores.on(redis_client)
    waiting, _decided = _records_without_indexes(stores)
    monkeypatch.setenv("REDIS_URL", redis_url)
    assert migrate_cli.main(["--indexes"]) == 0
    assert _views(stores)[0] == [waiting]
