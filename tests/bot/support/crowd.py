"""Other workspaces' records by the thousand, written in pipelines (no product call): what a person's reads must
not pay for, nor be pushed out by.

Each is stored as the publish transaction and the decide script store theirs (records, pointers, the shard indexes
and the per-workspace ones), so a reader that scans everyone's reads them all.
"""

from datetime import UTC, datetime, timedelta

import redis
from redis.cluster import RedisCluster

from bot.domain.grants import Grant, call_digest
from bot.domain.records import ApprovalRequest, Decision, PolicySummary
from bot.store import keys
from bot.store.approvals import approval_index
from bot.store.approvals.approval_record import Approval

OTHER_TEAM = "T0OTHERS"
OTHER_CHANNEL = "C0ELSEWHERE"


def other_approvals(
    client: redis.Redis,
    count: int,
    *,
    decided_at: datetime | None = None,
    team_id: str = OTHER_TEAM,
    channel_id: str = OTHER_CHANNEL,
    approver: str = "U0SOMEONE",
) -> list[str]:
    """``count`` approvals of another workspace (or channel), open (or decided at ``decided_at``), over every shard.

    Asked by ``U0SOMEONE``; ``approver`` is the one person their rule names.
    """
    created = datetime(2026, 11, 1, tzinfo=UTC)  # older than any test's own: they come first in a scan
    writes = client.pipeline(transaction=False)
    ids = []
    for index in range(count):
        session_id = f"{team_id}:{channel_id}:1700000000.{index:06d}"
        shard = keys.shard_of(session_id)
        request = ApprovalRequest(
            approval_id=keys.approval_id(session_id, f"crowd{index:06d}"),
            session_id=session_id,
            interrupt_id=f"v1:before_tool_call:tooluse_{index}:x",
            interrupt_name="approval",
            team_id=team_id,
            channel_id=channel_id,
            thread_ts=f"1700000000.{index:06d}",
            requested_by="U0SOMEONE",
            tool="restart_service",
            policy=PolicySummary(name="default", approver_users=(approver,)),
            created_at=created + timedelta(seconds=index),
        )
        approval_key = keys.approval(session_id, request.approval_id)
        writes.hset(approval_key, "request", request.model_dump_json())
        writes.set(keys.approval_session(shard, request.approval_id), session_id)
        if decided_at is None:
            opened_ms = int(request.created_at.timestamp() * 1000)
            writes.zadd(keys.open_index(shard), {request.approval_id: opened_ms})
            writes.zadd(keys.channel_open(shard, team_id, channel_id), {request.approval_id: opened_ms})
            writes.zadd(keys.open_by(shard), dict.fromkeys(approval_index.open_members(request), 0))
        else:
            decision = Decision(decision="approve", decided_by="U0SOMEONE", decided_at=decided_at)
            writes.hset(approval_key, "decision", decision.model_dump_json())
            members = approval_index.decided_members(Approval(request=request, decision=decision))
            writes.zadd(keys.recent_by(shard), dict.fromkeys(members, 0))
        ids.append(request.approval_id)
        if index % 500 == 499:
            writes.execute()
    writes.execute()
    return ids


def other_grants(client: redis.Redis, count: int, *, expires_at: datetime, team_id: str = OTHER_TEAM) -> None:
    """``count`` live grants of another workspace, ending at ``expires_at`` (listed as ``GrantStore.create`` does)."""
    granted_at = expires_at - timedelta(hours=1)
    writes = client.pipeline(transaction=False)
    for index in range(count):
        grant = Grant(
            grant_id=f"crowd{index:06d}",
            team_id=team_id,
            channel_id=OTHER_CHANNEL,
            rule="restarts",
            tool="restart_service",
            tool_input={"service": f"s{index}"},
            digest=call_digest("restart_service", {"service": f"s{index}"}, client=None),
            terms="deciders-v1",
            requester=None,
            granted_by="U0SOMEONE",
            granted_at=granted_at,
            expires_at=expires_at,
            approval_id=f"crowd{index:06d}",
            granted_ms=int(granted_at.timestamp() * 1000),
        )
        writes.hset(keys.grants(team_id, OTHER_CHANNEL), grant.grant_id, grant.model_dump_json())
        member = f"{team_id}:{OTHER_CHANNEL}:{grant.grant_id}"
        writes.zadd(keys.GRANTS_LIVE, {member: grant.expires_ms})
        writes.zadd(keys.grants_of(team_id, "U0SOMEONE"), {f"{OTHER_CHANNEL}:{grant.grant_id}": grant.expires_ms})
    writes.execute()


def commands_processed(client: redis.Redis) -> int:
    """Commands the server (every master of a cluster) has processed so far, from every client."""
    if isinstance(client, RedisCluster):
        per_node = client.info("stats", target_nodes=RedisCluster.PRIMARIES)
        return sum(int(info["total_commands_processed"]) for info in per_node.values())
    return int(client.info("stats")["total_commands_processed"])
