"""Shared fixtures: one real Redis server (and, when a test asks, one real Redis Cluster) per test run,
a clean database per test.

``redis_client`` is a client of the single server unless the test is parametrized over
``redis_target`` (see ``tests.redis_targets``): then it runs once on the server and once on a
3-master cluster started from the same binary.
"""

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
import redis
from redis.cluster import RedisCluster

from state import RedisServer
from state.redis_cluster import RedisClusterServers
from tests.outage import TimedOutage
from tests.seconds_clock import SecondsClock


def pytest_collection_finish(session: pytest.Session) -> None:
    """Take what collection left alive (every module imported, every test item: most of the heap, kept for the whole
    run) out of the garbage collector's reach.

    A full collection walks every tracked object while every thread waits: over those ~260,000 it took 0.3-1 s on two
    busy cores, long enough for a cluster's read to look like a master's silence, or for a click to miss Slack's 3 s.
    """
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private real server (redis-server from PATH, else a packaged binary) for the whole run."""
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterServers]:
    """A private real cluster of 3 masters (the same binary, ``cluster-enabled yes``) for the whole run."""
    with RedisClusterServers(masters=3) as cluster:
        yield cluster


@pytest.fixture
def redis_target(request: pytest.FixtureRequest) -> str:
    """``single`` or ``cluster``: which Redis ``redis_client`` talks to (``single`` unless parametrized)."""
    return str(getattr(request, "param", "single"))


@pytest.fixture
def redis_url(request: pytest.FixtureRequest, redis_target: str) -> str:
    """The URL of the target's Redis (for a cluster: one of its nodes)."""
    fixture = "redis_cluster" if redis_target == "cluster" else "redis_server"
    target: RedisServer | RedisClusterServers = request.getfixturevalue(fixture)
    return target.url


@pytest.fixture
def clock() -> SecondsClock:
    """A clock in seconds the test moves by hand (``clock.now``)."""
    return SecondsClock()


@pytest.fixture
def cluster_client_class() -> type[RedisCluster]:
    """The client class ``redis_client`` uses on a cluster (``tests/bot`` uses the bot's own)."""
    return RedisCluster


@pytest.fixture
def redis_client(redis_url: str, redis_target: str, cluster_client_class: type[RedisCluster]) -> Iterator[redis.Redis]:
    """A client on an empty database; closed after the test."""
    if redis_target == "cluster":
        # RedisCluster is no Redis subclass, but it speaks every command the code under test sends.
        client = cast(redis.Redis, cluster_client_class.from_url(redis_url))
    else:
        client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A private server this test may stop and start again (same port, data kept): see ``tests.outage``."""
    data_dir = tmp_path / "redis"
    data_dir.mkdir()
    with RedisServer(data_dir=data_dir) as server:
        yield server


@pytest.fixture
def outage(own_redis: RedisServer) -> Iterator[TimedOutage]:
    """Redis (``own_redis``) stopped when ``begin()`` is called (by ``StopRedisAfterTool``, say), back 1.5 s later."""
    blip = TimedOutage(own_redis, pause_s=1.5)
    yield blip
    blip.settle()
