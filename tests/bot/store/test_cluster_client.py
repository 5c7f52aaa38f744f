"""The bot's cluster client routes a stream read by the streams it names: the master redis-py asks about a command's
keys (its default node) going silent no longer stalls every shard's job reads."""

import time
from collections.abc import Iterator

import pytest
import redis
from prometheus_client import REGISTRY

from bot.services import connect_redis
from bot.store import failed_attempts, keys
from bot.store.cluster_client import BotClusterPipeline, BotRedisCluster, stream_keys
from bot.store.queues.jobs import Job, JobQueue, ResumeJob
from state import RedisServer
from state.redis_cluster import RedisClusterServers
from tests.bot.support.doomed_worker import wait_until
from tests.outage import redis_paused


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterServers]:
    with RedisClusterServers(masters=3) as servers:
        yield servers


def test_the_streams_of_a_read_are_found_in_its_arguments() -> None:
    assert stream_keys(("XREADGROUP", "GROUP", "workers", "w-1", "COUNT", 5, "STREAMS", "a", "b", ">", ">")) == (
        "a",
        "b",
    )
    assert stream_keys(("XREAD", b"BLOCK", 20, b"streams", b"a", b"0-0")) == (b"a",)
    # A group or consumer named STREAMS is no keyword; a read the server would refuse is left to redis-py.
    assert stream_keys(("XREADGROUP", "GROUP", "STREAMS", "STREAMS", "STREAMS", "a", ">")) == ("a",)
    assert stream_keys(("XREADGROUP", "GROUP", "workers", "w-1", "STREAMS", "a")) is None
    assert stream_keys(("GET", "a")) is None


def test_a_silent_default_master_leaves_the_other_shards_job_reads_alone(cluster: RedisClusterServers) -> None:
    client = connect_redis(cluster.url, retry_s=0.0)
    client.flushall(target_nodes="primaries")
    jobs = JobQueue(client)
    jobs.ensure_group()
    threads = [f"T0TEAM:C0OPS:1700{index}.000100" for index in range(40)]
    sessions = {keys.shard_of(session_id): session_id for session_id in threads}
    for shard in keys.shards():
        jobs.enqueue(ResumeJob(sessions[shard], 1))
    default_port = int(client.get_default_node().port)  # type: ignore[attr-defined]
    [silent] = [node for node in cluster.nodes if node.port == default_port]
    [silent_shard] = [
        shard
        for shard in keys.shards()
        if int(client.get_node_from_key(keys.jobs(shard)).port) == default_port  # type: ignore[attr-defined]
    ]
    with redis_paused(silent):
        started = time.monotonic()
        read = jobs.read("worker-1", block_ms=1, count=5)
        took_s = time.monotonic() - started
    assert sorted(job.shard for job in read) == [shard for shard in keys.shards() if shard != silent_shard]
    assert took_s < 0.5  # redis-py asked the silent master for the read's keys first: 1 s, then every shard failed
    # The silent shard's read was kept, not dropped: a later read hands its job over. Waited for here, so no read of
    # this test is still out when the next pauses a master (timing out then, it counted in that test's metric).
    late: list[Job] = []

    def read_again() -> bool:
        late.extend(jobs.read("worker-1", block_ms=1, count=5))
        return bool(late) and not jobs.reads_owed()

    wait_until(read_again, "the silent shard's job is read and no read is still out")
    assert [job.shard for job in late] == [silent_shard]
    client.close()


def test_a_command_to_a_paused_master_gives_up_within_the_retry_time_as_on_one_server(
    cluster: RedisClusterServers,
) -> None:
    client = connect_redis(cluster.url, retry_s=2.0, timeout_s=1.0)
    paused, _healthy_key = _paused_key_and_a_healthy_one(client, cluster)
    errors_before = _timeouts_counted()
    with redis_paused(paused):
        started = time.monotonic()
        with pytest.raises(redis.TimeoutError) as raised:
            client.get("paused-key")
        took_s = time.monotonic() - started
    assert _timeouts_counted() == errors_before + 1  # signoff_redis_errors_total, as on one server
    # One 1 s attempt: a second could not end within the 2 s (redis-py's cluster retried 4 times: 6.5 s).
    assert took_s < 2.0
    assert type(raised.value).__name__ == "TimeoutError"  # as readiness and the metrics name it
    assert client.get("paused-key") == b"1"  # the client serves on once the master answers
    client.close()


def test_a_pipeline_to_a_paused_master_gives_up_within_the_retry_time_as_one_command(
    cluster: RedisClusterServers,
) -> None:
    client = connect_redis(cluster.url, retry_s=2.0, timeout_s=1.0)
    paused, healthy_key = _paused_key_and_a_healthy_one(client, cluster)
    took_s, failed = [], []
    with redis_paused(paused):
        # The first finds its connection to the paused master open; the next one opens one (its handshake times out).
        for _ in range(2):
            pipeline = client.pipeline(transaction=False)
            pipeline.get(healthy_key)
            pipeline.get("paused-key")
            failed_before, started = failed_attempts.here(), time.monotonic()
            with pytest.raises(redis.TimeoutError) as raised:
                pipeline.execute()
            took_s.append(time.monotonic() - started)
            failed.append(failed_attempts.here() - failed_before)
            assert type(raised.value).__name__ == "TimeoutError"  # as readiness and the metrics name it
    # One 1 s attempt each (redis-py sent the command again on its own, then the pipeline: 13 s, then 6.5 s).
    assert max(took_s) < 1.5
    assert failed[0] > 0  # the reads were sent: a reply may be lost
    client.close()


def test_a_pipeline_keeps_a_healthy_masters_replies_while_another_master_is_paused(
    cluster: RedisClusterServers,
) -> None:
    client = connect_redis(cluster.url, retry_s=2.0, timeout_s=1.0)
    paused, healthy_key = _paused_key_and_a_healthy_one(client, cluster)
    pipeline = client.pipeline(transaction=False)
    pipeline.get(healthy_key)
    pipeline.get("paused-key")
    with redis_paused(paused):
        started = time.monotonic()
        healthy, timed_out = pipeline.execute(raise_on_error=False)
        took_s = time.monotonic() - started
    assert healthy == b"2"
    assert isinstance(timed_out, redis.TimeoutError)
    assert took_s < 1.5
    client.close()


def test_a_pipelined_command_without_a_key_times_out_on_a_paused_master_as_any_other(
    cluster: RedisClusterServers,
) -> None:
    client = connect_redis(cluster.url, retry_s=2.0, timeout_s=1.0)
    paused, _healthy_key = _paused_key_and_a_healthy_one(client, cluster)
    node = client.get_node_from_key("paused-key")  # type: ignore[attr-defined]
    pipeline = client.pipeline(transaction=False)
    pipeline.execute_command("PING", target_nodes=node)  # type: ignore[no-untyped-call]
    with redis_paused(paused):
        started = time.monotonic()
        with pytest.raises(redis.TimeoutError):  # was "Missing key": its node was looked up by its keys
            pipeline.execute()
        took_s = time.monotonic() - started
    assert took_s < 1.5
    client.close()


def _timeouts_counted() -> float:
    """``signoff_redis_errors_total{error="TimeoutError"}`` of this process."""
    return REGISTRY.get_sample_value("signoff_redis_errors_total", {"error": "TimeoutError"}) or 0.0


def _paused_key_and_a_healthy_one(client: redis.Redis, cluster: RedisClusterServers) -> tuple[RedisServer, str]:
    """The master of ``paused-key`` (set to 1), to pause, and a key of another master (set to 2)."""
    client.set("paused-key", "1")
    paused_port = int(client.get_node_from_key("paused-key").port)  # type: ignore[attr-defined]
    [paused] = [node for node in cluster.nodes if node.port == paused_port]
    healthy_key = next(
        key
        for key in (f"healthy-key-{index}" for index in range(100))
        if int(client.get_node_from_key(key).port) != paused_port  # type: ignore[attr-defined]
    )
    client.set(healthy_key, "2")
    return paused, healthy_key


def test_a_pipeline_to_healthy_masters_answers_as_redis_pys(cluster: RedisClusterServers) -> None:
    client = connect_redis(cluster.url, retry_s=2.0, timeout_s=1.0)
    client.flushall(target_nodes="primaries")
    names = [f"pipelined-{index}" for index in range(12)]  # on every master
    assert len({client.get_node_from_key(name).port for name in names}) == 3  # type: ignore[attr-defined]
    writes = client.pipeline()
    assert isinstance(writes, BotClusterPipeline)
    for index, name in enumerate(names):
        writes.set(name, index)
    assert writes.execute() == [True] * len(names)
    reads = client.pipeline(transaction=False)
    for name in names:
        reads.get(name)
    reads.hget(names[0], "field")  # a string: the error stays in its place
    *values, wrong_type = reads.execute(raise_on_error=False)
    assert values == [str(index).encode() for index in range(len(names))]
    assert isinstance(wrong_type, redis.ResponseError)
    assert not isinstance(
        client.pipeline(transaction=True), BotClusterPipeline
    )  # a transaction retries by time already
    client.close()


@pytest.mark.parametrize("redis_target", ["cluster"], indirect=True)
def test_the_bots_tests_run_on_the_bots_own_cluster_client(redis_client: redis.Redis) -> None:
    assert isinstance(redis_client, BotRedisCluster)
