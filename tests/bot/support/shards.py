"""Reading the bot's per-shard structures in tests: every shard, summed or merged (as the bot's readers do)."""

from typing import Any

import redis

from bot.store import keys


def jobs_queued(client: redis.Redis) -> int:
    """Jobs in every shard's stream."""
    return sum(int(client.xlen(keys.jobs(shard))) for shard in keys.shards())


def jobs(client: redis.Redis) -> list[Any]:
    """Every shard's stream entries (shard by shard)."""
    entries: list[Any] = []
    for shard in keys.shards():
        entries.extend(client.xrange(keys.jobs(shard)) or [])
    return entries


def open_approvals(client: redis.Redis) -> list[bytes]:
    """Every shard's open-approvals index members."""
    members: list[bytes] = []
    for shard in keys.shards():
        members.extend(client.zrange(keys.open_index(shard), 0, -1))  # type: ignore[arg-type]
    return members


def audit_length(client: redis.Redis) -> int:
    """Events in every shard's audit stream."""
    return sum(int(client.xlen(keys.audit(shard))) for shard in keys.shards())
