"""Run tests on one Redis server and on a Redis Cluster: ``pytest_generate_tests = on_both`` in a test
module or a ``conftest.py`` parametrizes every test there that uses ``redis_client`` (ids ``single``
and ``cluster``). A test marked ``single_redis`` runs on the server only (say why next to the mark)."""

from typing import cast

import pytest
import redis
from redis.cluster import RedisCluster

TARGETS = ("single", "cluster")


def on_both(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``metafunc``'s test over both targets if it talks to Redis through ``redis_client``."""
    if "redis_target" in metafunc.fixturenames and metafunc.definition.get_closest_marker("single_redis") is None:
        metafunc.parametrize("redis_target", TARGETS, indirect=True)


def every_key(client: redis.Redis) -> list[bytes]:
    """Every key of the database (on a cluster: of every master)."""
    if isinstance(client, RedisCluster):
        found: list[bytes] = client.keys("*", target_nodes=RedisCluster.PRIMARIES)
        return found
    return cast(list[bytes], client.keys("*"))


def contents(client: redis.Redis, key: bytes) -> object:
    """What ``key`` holds, comparable across reads: a set's members sorted (``DUMP`` of a hash-table set follows its
    table's order, which a lookup's incremental rehash may change on Redis 7.0 without changing the set)."""
    if client.type(key) in (b"set", "set"):
        return sorted(cast(set[bytes], client.smembers(key)))
    return client.dump(key)


def client_for(url: str) -> redis.Redis:
    """A client of ``url``: a ``RedisCluster`` when it names a cluster node (for tests run in another process)."""
    probe = redis.Redis.from_url(url)
    try:
        clustered = str(probe.info("cluster").get("cluster_enabled", 0)) == "1"
    finally:
        probe.close()
    return cast(redis.Redis, RedisCluster.from_url(url)) if clustered else redis.Redis.from_url(url)
