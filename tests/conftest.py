"""Shared fixtures: one real Redis server per test run, a clean database per test."""

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from state import RedisServer
from tests.outage import TimedOutage


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private real server (redis-server from PATH, else a packaged binary) for the whole run."""
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_client(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A client on an empty database; closed after the test."""
    client = redis.Redis.from_url(redis_server.url)
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
