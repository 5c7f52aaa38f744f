"""A job read whose reply is lost (the client gave up waiting, the server ran the read later) is this consumer's and
pending: the next read of its shard reads this consumer's own history first, so the job runs at once instead of
waiting out the claim time (it used to be found only by ``claim_stale``, 30 s later)."""

import time
from collections.abc import Iterator

import pytest
import redis

from bot.services import connect_redis
from bot.store import keys
from bot.store.queues.jobs import JobQueue, ResumeJob
from bot.store.queues.shard_trouble import RESTING_S
from state import RedisServer
from state.redis_cluster import RedisClusterServers
from tests.bot.support.doomed_worker import wait_until
from tests.outage import redis_paused

_CLAIM_IDLE_S = 30.0  # the worker's claim time: a lost job used to wait this long
_TIMEOUT_S = 0.3  # the client gives up on a reply after this (no retry): the paused server's reply is lost


def _session_on(shard: int) -> str:
    return next(
        session_id
        for session_id in (f"T0TEAM:C0OPS:1700{index}.000100" for index in range(200))
        if keys.shard_of(session_id) == shard
    )


def _pending(client: redis.Redis, shard: int) -> int:
    return int(client.xpending(keys.jobs(shard), keys.JOBS_GROUP)["pending"])


def test_a_read_whose_reply_was_lost_hands_its_job_over_at_the_next_read(own_redis: RedisServer) -> None:
    client = connect_redis(own_redis.url, retry_s=0.0, timeout_s=_TIMEOUT_S)
    observer = connect_redis(own_redis.url, retry_s=1.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    session_id = _session_on(0)
    jobs.enqueue(ResumeJob(session_id, 1))
    with redis_paused(own_redis), pytest.raises(redis.TimeoutError):
        jobs.read("worker-1", block_ms=1)  # sent; the client gives up before the server answers
    # Resumed, the server ran that read: the job is worker-1's, its reply went nowhere.
    wait_until(lambda: _pending(observer, 0) == 1, "the paused read ran")
    assert observer.xreadgroup(keys.JOBS_GROUP, "worker-2", {keys.jobs(0): ">"}) == []  # nobody else gets it

    started = time.monotonic()
    [job] = jobs.read("worker-1", block_ms=1)
    assert job.fields["session_id"] == session_id
    assert time.monotonic() - started < 1.0
    assert jobs.read("worker-1", block_ms=1) == []  # handed over once
    jobs.ack(job)
    assert _pending(observer, 0) == 0


def test_the_history_read_leaves_out_the_jobs_this_consumer_holds(own_redis: RedisServer) -> None:
    client = connect_redis(own_redis.url, retry_s=0.0, timeout_s=_TIMEOUT_S)
    observer = connect_redis(own_redis.url, retry_s=1.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(0), 1))
    [running] = jobs.read("worker-1", block_ms=1)  # held: it runs in this worker now
    lost_session = _session_on(0)
    jobs.enqueue(ResumeJob(lost_session, 2))
    with redis_paused(own_redis), pytest.raises(redis.TimeoutError):
        jobs.read("worker-1", block_ms=1)
    wait_until(lambda: _pending(observer, 0) == 2, "the paused read ran")

    [lost] = jobs.read("worker-1", block_ms=1)
    assert lost.entry_id != running.entry_id  # the running job is not handed over a second time
    assert lost.fields["version"] == "2"


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterServers]:
    with RedisClusterServers(masters=3) as servers:
        yield servers


def test_on_a_cluster_a_shard_whose_read_reply_was_lost_hands_its_job_over_after_its_rest(
    cluster: RedisClusterServers,
) -> None:
    client = connect_redis(cluster.url, retry_s=0.0, timeout_s=_TIMEOUT_S)
    client.flushall(target_nodes="primaries")
    observer = connect_redis(cluster.url, retry_s=1.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    session_id = _session_on(0)
    jobs.enqueue(ResumeJob(session_id, 1))
    port = int(client.get_node_from_key(keys.jobs(0)).port)  # type: ignore[attr-defined]
    [master] = [node for node in cluster.nodes if node.port == port]
    with redis_paused(master):
        assert jobs.read("worker-1", block_ms=1) == []  # the other shards answered; shard 0's read is kept
        time.sleep(_TIMEOUT_S * 2)  # its client gave up on it: the reply is lost (shorter than the node timeout)
    wait_until(lambda: _pending(observer, 0) == 1, "the paused read ran")

    started = time.monotonic()
    found: list[str] = []

    def read_some() -> bool:
        found.extend(job.fields["session_id"] for job in jobs.read("worker-1", block_ms=1))
        return bool(found)

    wait_until(read_some, "the lost job is read", timeout_s=_CLAIM_IDLE_S / 2)
    assert found == [session_id]
    assert time.monotonic() - started < RESTING_S + 1.0  # the shard rests a moment after its failed read, then
