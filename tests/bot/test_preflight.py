"""Start-up checks against real servers: a cluster that stops every shard for one master's failover is named."""

import logging
from collections.abc import Iterator

import pytest
import redis

from bot import preflight
from bot.services import connect_redis
from state.redis_cluster import RedisClusterServers
from state.redis_server import RedisServer


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterServers]:
    with RedisClusterServers(masters=3) as servers:
        yield servers


def _require_full_coverage(servers: RedisClusterServers, value: str, *, nodes: int) -> None:
    for node in servers.nodes[:nodes]:
        redis.Redis.from_url(node.url).config_set("cluster-require-full-coverage", value)


def test_a_cluster_requiring_full_coverage_is_named_with_its_masters(cluster: RedisClusterServers) -> None:
    client = connect_redis(cluster.url, retry_s=1)
    _require_full_coverage(cluster, "yes", nodes=2)
    try:
        warning = preflight.full_coverage_warning(client)
    finally:
        _require_full_coverage(cluster, "no", nodes=3)

    assert warning is not None
    assert warning.startswith("cluster-require-full-coverage is yes on ")
    assert all(f"127.0.0.1:{node.port}" in warning for node in cluster.nodes[:2])
    assert f"127.0.0.1:{cluster.nodes[2].port}" not in warning


def test_the_warning_is_logged_at_start(cluster: RedisClusterServers, caplog: pytest.LogCaptureFixture) -> None:
    client = connect_redis(cluster.url, retry_s=1)
    _require_full_coverage(cluster, "yes", nodes=3)
    try:
        with caplog.at_level(logging.WARNING, logger="bot.preflight"):
            preflight.warn_on_full_coverage(client)
    finally:
        _require_full_coverage(cluster, "no", nodes=3)

    assert [record.getMessage() for record in caplog.records if "cluster-require-full-coverage" in record.getMessage()]


def test_a_cluster_that_serves_through_a_failover_and_a_single_server_say_nothing(
    cluster: RedisClusterServers, redis_server: RedisServer
) -> None:
    assert preflight.full_coverage_warning(connect_redis(cluster.url, retry_s=1)) is None
    assert preflight.full_coverage_warning(connect_redis(redis_server.url, retry_s=1)) is None


def test_a_cluster_of_one_master_is_asked_too() -> None:
    with RedisClusterServers(masters=1) as single:
        client = connect_redis(single.url, retry_s=1)
        assert preflight.full_coverage_warning(client) is None
        _require_full_coverage(single, "yes", nodes=1)
        assert (preflight.full_coverage_warning(client) or "").startswith(
            "cluster-require-full-coverage is yes on its master"
        )
