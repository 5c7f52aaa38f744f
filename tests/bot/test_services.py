"""Which client the bot builds for ``REDIS_URL``: a cluster is detected from any node, or forced by setting. A bot
closed ends the threads it started."""

import threading

import pytest
import redis
from redis.cluster import RedisCluster

from bot.services import connect_redis
from bot.settings import ConfigError, load_settings
from state import RedisServer
from state.redis_cluster import RedisClusterServers
from tests.bot.support.harness import demo_factory, running_bot


def test_a_url_naming_any_cluster_node_gets_a_cluster_client(redis_cluster: RedisClusterServers) -> None:
    for node in redis_cluster.nodes:
        client = connect_redis(node.url, retry_s=0.1)
        try:
            assert isinstance(client, RedisCluster)
            client.set("signoff:test:detected", node.port)  # routed to the slot's master, wherever it is
            assert client.get("signoff:test:detected") == str(node.port).encode()
        finally:
            client.close()


def test_a_single_server_gets_a_plain_client(redis_server: RedisServer) -> None:
    client = connect_redis(redis_server.url, retry_s=0.1)
    assert type(client) is redis.Redis
    client.close()


def test_the_setting_forces_the_mode_without_asking(
    redis_cluster: RedisClusterServers, redis_server: RedisServer
) -> None:
    plain = connect_redis(redis_cluster.url, retry_s=0.1, cluster="no")
    assert type(plain) is redis.Redis
    plain.close()
    forced = connect_redis(redis_cluster.url, retry_s=0.1, cluster="yes")
    assert isinstance(forced, RedisCluster)
    forced.close()


@pytest.mark.parametrize(("variable", "value"), [("REDIS_SHARDS", "0"), ("REDIS_CLUSTER", "maybe")])
def test_bad_cluster_settings_are_named(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv(variable, value)

    with pytest.raises(ConfigError, match=variable):
        load_settings("worker")


_OWN_THREADS = ("shard", "outbox-lane")
"""The prefixes of the threads the bot's queues read shards on and its deliverer runs lanes on."""


@pytest.mark.parametrize("redis_target", ["cluster"], indirect=True)  # on one server, neither kind is started
def test_a_bot_closed_ends_its_shard_and_lane_threads(redis_client: redis.Redis) -> None:
    # Left running, a test run's bots kept theirs (and every object they hold) until a full garbage collection,
    # which then stopped the whole process for up to a second.
    before = set(threading.enumerate())
    with running_bot(redis_client, agent_factory=demo_factory) as bot:  # closes its services on leaving
        bot.ask()
        started = [thread for thread in set(threading.enumerate()) - before if thread.name.startswith(_OWN_THREADS)]
    assert started  # the bot did start some: the test sees what it checks
    for thread in started:
        thread.join(timeout=2)
        assert not thread.is_alive(), thread.name
