"""Open approvals stored as publishing stores them (``ApprovalStore.open_round``), many per round trip (pipelines)."""

from datetime import datetime

import redis
from redis.cluster import RedisCluster

from bench.fixtures import synthetic_request
from bot.domain.records import ApprovalRequest, PolicySummary
from bot.store.approvals.approvals import ApprovalStore

_CHUNK = 1000


def open_elsewhere(
    client: redis.Redis, count: int, *, created_at: datetime, team_id: str = "T0BENCH", channel_id: str = "C0BENCH"
) -> list[ApprovalRequest]:
    """``count`` open approvals of ``team_id`` (another workspace), each in its own session; return their requests."""
    approvals = ApprovalStore(client)
    policy = PolicySummary(name="elsewhere")
    one_slot = not isinstance(client, RedisCluster)  # a cluster's MULTI cannot span the sessions' slots
    opened = []
    for start in range(0, count, _CHUNK):
        pipeline = client.pipeline(transaction=one_slot)
        for index in range(start, min(start + _CHUNK, count)):
            request = synthetic_request(
                index, policy=policy, created_at=created_at, team_id=team_id, channel_id=channel_id
            )
            approvals.open_round(session_id=request.session_id, version=1, requests=[request], pipeline=pipeline)
            opened.append(request)
        pipeline.execute()
    return opened
