"""Open approvals of another workspace, stored as publishing stores them, many per round trip (pipelines)."""

from datetime import datetime

import redis
from redis.cluster import RedisCluster

from bench.fixtures import synthetic_request
from bot.domain.records import PolicySummary
from bot.store.approvals import ApprovalStore

_CHUNK = 1000


def open_elsewhere(client: redis.Redis, count: int, *, created_at: datetime) -> None:
    """``count`` open approvals of ``synthetic_request``'s workspace (``T0BENCH``), each in its own session."""
    approvals = ApprovalStore(client)
    policy = PolicySummary(name="elsewhere")
    one_slot = not isinstance(client, RedisCluster)  # a cluster's MULTI cannot span the sessions' slots
    for start in range(0, count, _CHUNK):
        pipeline = client.pipeline(transaction=one_slot)
        for index in range(start, min(start + _CHUNK, count)):
            request = synthetic_request(index, policy=policy, created_at=created_at)
            approvals.open_round(session_id=request.session_id, version=1, requests=[request], pipeline=pipeline)
        pipeline.execute()
