"""A private Redis Cluster per test module: these tests pause its masters, which the shared cluster must never see."""

from collections.abc import Iterator

import pytest

from state.redis_cluster import RedisClusterServers


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterServers]:
    """Three masters of the module's own, started once for the module."""
    with RedisClusterServers(masters=3) as servers:
        yield servers
