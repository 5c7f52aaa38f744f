"""A script sent over connections of its own: kept across calls and threads, and what the pool survives, it survives."""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import pytest
import redis
from redis.cluster import RedisCluster

from bot.observe import metrics
from bot.store.direct_script import REPLICA_WAIT_MS, DirectScript
from state import RedisServer
from state.redis_cluster import RedisClusterServers
from tests.redis_targets import on_both

pytest_generate_tests = on_both

_ECHO = "redis.call('INCR', KEYS[1]) return {KEYS[1], ARGV[1]}"
KEY = "signoff:{s0.0}:test-thread-script"


def _script_connections(client: redis.Redis) -> set[str]:
    """The ids of the connections of the server holding ``KEY`` whose last command ran a script (``EVALSHA``)."""
    node = client.get_node_from_key(KEY).redis_connection if isinstance(client, RedisCluster) else client
    assert node is not None
    return {str(each["id"]) for each in node.client_list() if each.get("cmd") == "evalsha"}


def _kill_every_client(client: redis.Redis) -> None:
    """Close every client connection the server (every master of a cluster) has, as a restart would."""
    if isinstance(client, RedisCluster):
        for node in client.get_primaries():
            node.redis_connection.client_kill_filter(_type="normal", skipme=True)
    else:
        client.client_kill_filter(_type="normal", skipme=True)


def test_calls_from_threads_that_come_and_go_reuse_one_connection_apart_from_the_pool(
    redis_client: redis.Redis,
) -> None:
    script = DirectScript(redis_client, _ECHO)
    before = _script_connections(redis_client)  # other tests' scripts, on the same server
    answers: list[bytes] = []
    for _ in range(2):  # a thread per request, as a threading HTTP server runs them
        thread = threading.Thread(target=lambda: answers.extend(script(keys=[KEY], args=["hi"])[1] for _ in range(3)))
        thread.start()
        thread.join()

    assert answers == [b"hi"] * 6
    # One connection ran every call, and it is not the pool's (which is the one asking for the list now).
    assert len(_script_connections(redis_client) - before) == 1
    assert int(redis_client.get(KEY) or 0) == 6


def test_a_script_the_server_forgot_is_loaded_again(redis_client: redis.Redis) -> None:
    script = DirectScript(redis_client, _ECHO)
    assert script(keys=[KEY], args=["before"])[1] == b"before"
    redis_client.script_flush()  # as a restart without persistence of the script cache does

    assert script(keys=[KEY], args=["after"])[1] == b"after"
    assert int(redis_client.get(KEY) or 0) == 2  # each call ran once


def test_a_broken_connection_falls_back_to_the_pool_and_a_new_one_is_made(redis_client: redis.Redis) -> None:
    script = DirectScript(redis_client, _ECHO)
    assert script(keys=[KEY], args=["one"])[1] == b"one"
    first = _script_connections(redis_client)
    _kill_every_client(redis_client)

    assert script(keys=[KEY], args=["two"])[1] == b"two"  # through the pool, which reconnects
    assert script(keys=[KEY], args=["three"])[1] == b"three"  # on a new connection of its own

    # Its new connection (the pool's, which ran the fallback, is the one asking for the list now).
    assert len(_script_connections(redis_client) - first) == 1
    assert int(redis_client.get(KEY) or 0) == 3


@pytest.mark.single_redis  # a master and its replica of its own
def test_with_replicas_asked_a_reply_comes_once_a_replica_holds_the_write_or_is_counted_late(tmp_path: Path) -> None:
    with _master_and_replica(tmp_path) as (client, replica, replica_server):
        script = DirectScript(client, _ECHO, replicas=1)
        late = metrics.UNREPLICATED_WRITES._value.get()
        assert script(keys=[KEY], args=["held"])[1] == b"held"
        assert replica.get(KEY) == b"1"  # acknowledged by the replica before the reply came back
        assert metrics.UNREPLICATED_WRITES._value.get() == late

        replica_server.pause()
        try:
            started = time.monotonic()
            assert script(keys=[KEY], args=["alone"])[1] == b"alone"  # the write stands on the master
            assert time.monotonic() - started >= REPLICA_WAIT_MS / 1000
        finally:
            replica_server.resume()
        assert metrics.UNREPLICATED_WRITES._value.get() == late + 1
        client.script_flush()  # a NOSCRIPT reply with WAIT's after it: the connection stays in step
        assert script(keys=[KEY], args=["again"])[1] == b"again"
        assert int(client.get(KEY) or 0) == 3


@pytest.mark.single_redis  # a master and its replica of its own
def test_the_pooled_call_after_a_broken_connection_still_waits_for_the_replicas(tmp_path: Path) -> None:
    """Issue #42: the fallback sent no ``WAIT``, so a write acknowledged after it may have been on the master alone."""
    with _master_and_replica(tmp_path) as (client, replica, replica_server):
        script = DirectScript(client, _ECHO, replicas=1)
        assert script.replicated(keys=[KEY], args=["direct"]) == ([KEY.encode(), b"direct"], True)
        _kill_waiting(client)  # the script's own connection (its last command: WAIT), not the pool's
        waits = _calls(client, "wait")
        late = metrics.UNREPLICATED_WRITES._value.get()

        assert script.replicated(keys=[KEY], args=["pooled"]) == ([KEY.encode(), b"pooled"], True)
        assert _calls(client, "wait") == waits + 1  # the pooled call waited for the replica too
        assert replica.get(KEY) == b"2"
        assert metrics.UNREPLICATED_WRITES._value.get() == late

        assert script.replicated(keys=[KEY], args=["direct again"])[1]  # on a new connection of its own
        replica_server.pause()
        try:
            _kill_waiting(client)
            assert script.replicated(keys=[KEY], args=["alone"]) == ([KEY.encode(), b"alone"], False)
        finally:
            replica_server.resume()
        assert metrics.UNREPLICATED_WRITES._value.get() == late + 1  # counted, as the direct path counts it
        assert int(client.get(KEY) or 0) == 4


def _kill_waiting(client: redis.Redis) -> None:
    """Close the one connection whose last command was ``WAIT``: a ``DirectScript``'s (the pool's is asking)."""
    [own] = [each["id"] for each in client.client_list() if each.get("cmd") == "wait"]
    client.client_kill_filter(_id=own)


def _calls(client: redis.Redis, command: str) -> int:
    stats = client.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


@pytest.mark.single_redis  # a cluster of its own: a master and its replica
def test_on_a_cluster_the_pooled_call_waits_on_the_node_that_ran_the_script() -> None:
    with RedisClusterServers(masters=1, replicas=1) as cluster:
        client = cast(redis.Redis, RedisCluster.from_url(cluster.url, socket_timeout=2))
        assert isinstance(client, RedisCluster)
        master = client.get_node_from_key(KEY).redis_connection
        assert master is not None
        script = DirectScript(client, _ECHO, replicas=1)
        assert script.replicated(keys=[KEY], args=["direct"]) == ([KEY.encode(), b"direct"], True)
        _kill_waiting(master)
        waits = _calls(master, "wait")

        assert script.replicated(keys=[KEY], args=["pooled"]) == ([KEY.encode(), b"pooled"], True)
        assert _calls(master, "wait") == waits + 1  # on the script's node and connection, not every node's
        assert int(client.get(KEY) or 0) == 2


@contextmanager
def _master_and_replica(tmp_path: Path) -> Iterator[tuple[redis.Redis, redis.Redis, RedisServer]]:
    """A client of a master of its own, a client of its replica, and the replica's server, once it follows."""
    (tmp_path / "master").mkdir()
    (tmp_path / "replica").mkdir()
    with RedisServer(data_dir=tmp_path / "master") as master:
        following = ("--replicaof", "127.0.0.1", str(master.port))
        with RedisServer(data_dir=tmp_path / "replica", extra_args=following) as replica_server:
            client = redis.Redis.from_url(master.url, socket_timeout=2)
            replica = redis.Redis.from_url(replica_server.url)
            deadline = time.monotonic() + 10
            while replica.info("replication").get("master_link_status") != "up":
                assert time.monotonic() < deadline, "the replica never caught up"
                time.sleep(0.05)
            assert client.wait(1, 10_000) == 1  # the replica acknowledges: past its first sync
            yield client, replica, replica_server
