"""How many shards this Redis's data is spread over: recorded by the first process, checked by every other.

A session's shard is a hash of its id modulo ``REDIS_SHARDS``: a process started with another count
would look for every session, queue and index in the wrong place, and find nothing.
"""

import redis

from bot.store import keys
from state.text import as_text


def recorded_shards(client: redis.Redis, shards: int) -> int:
    """The shard count this Redis's data was written with (``shards`` is recorded when none was yet)."""
    client.set(keys.SHARD_LAYOUT, shards, nx=True)
    recorded = client.get(keys.SHARD_LAYOUT)
    return int(as_text(recorded)) if recorded is not None else shards
