"""Shared fixtures: one real Redis server per test run, a clean database per test."""

from collections.abc import Iterator

import pytest
import redis

from state import RedisServer


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
