"""A job read whose reply is lost (the client gave up waiting, the server ran the read later) is this consumer's and
pending: the next read of its shard reads this consumer's own history first, so the job runs at once instead of
waiting out the claim time (it used to be found only by ``claim_stale``, 30 s later)."""

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from bot.services import connect_redis
from bot.store import keys
from bot.store.cluster_client import ClusterUnreachable
from bot.store.queues.jobs import _READ, JobQueue, ResumeJob
from bot.store.queues.shard_trouble import RESTING_S
from state import RedisServer
from state.redis_cluster import RedisClusterServers
from state.text import as_text
from tests.bot.support.doomed_worker import wait_until
from tests.outage import cluster_paused, redis_paused

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


def _a_job_on_shard_0(
    cluster: RedisClusterServers, *, retry_s: float
) -> tuple[redis.Redis, redis.Redis, JobQueue, str]:
    """A flushed cluster holding one resume job on shard 0: the client (``retry_s``, short timeouts), an observer,
    the job queue and the job's session."""
    client = connect_redis(cluster.url, retry_s=retry_s, timeout_s=_TIMEOUT_S)
    client.flushall(target_nodes="primaries")
    jobs = JobQueue(client)
    jobs.ensure_group()
    session_id = _session_on(0)
    jobs.enqueue(ResumeJob(session_id, 1))
    return client, connect_redis(cluster.url, retry_s=1.0), jobs, session_id


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


def test_on_a_cluster_a_shard_whose_read_reply_was_lost_hands_its_job_over_after_its_rest(
    cluster: RedisClusterServers,
) -> None:
    client, observer, jobs, session_id = _a_job_on_shard_0(cluster, retry_s=0.0)
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


def test_on_a_cluster_a_read_whose_attempt_timed_out_then_found_no_node_hands_its_job_over_at_the_next_read(
    cluster: RedisClusterServers,
) -> None:
    """redis-py's cluster client refreshes its layout before a second attempt; reaching no node, it gives up (with
    ``RedisClusterUnreachableError``, raised as ``ClusterUnreachable``): the first attempt's reply was lost all the
    same."""
    _client, observer, jobs, session_id = _a_job_on_shard_0(cluster, retry_s=5.0)  # time for a second attempt
    time.sleep(1.0)  # the client's next layout refresh is due (one a second at most)
    with cluster_paused(cluster):  # briefly: under the cluster's node timeout, nothing fails over
        with pytest.raises(redis.TimeoutError):  # no shard answered in time: each read is kept for the next
            jobs.read("worker-1", block_ms=1)
        shard_read = jobs.rests.late(_READ, 0)
        assert shard_read is not None
        with pytest.raises(ClusterUnreachable):
            shard_read.answer.result(timeout=10)  # the layout refresh reached no node
    wait_until(lambda: _pending(observer, 0) == 1, "the paused read ran")
    found: list[str] = []

    def read_some() -> bool:
        try:
            found.extend(job.fields["session_id"] for job in jobs.read("worker-1", block_ms=1))
        except ClusterUnreachable:  # the kept reads' errors, every shard's: the worker reads again
            return False
        return bool(found)

    wait_until(read_some, "the lost job is read", timeout_s=RESTING_S + 2.0)  # it used to wait for the claim time
    assert found == [session_id]


def _pending_of(client: redis.Redis, shard: int, consumer: str) -> list[str]:
    rows = client.xpending_range(keys.jobs(shard), keys.JOBS_GROUP, "-", "+", 100, consumername=consumer)
    return [str(as_text(row["message_id"])) for row in rows]  # type: ignore[arg-type]


@contextlib.contextmanager
def _first_reply_lost(naming: str = ":jobs") -> Iterator[list[bool]]:
    """The first reply naming ``naming`` (a job stream, unless told) is lost to a reset connection (the server ran the
    command)."""
    real_read = redis.Connection.read_response
    lost = [False]

    def lose_first(self: redis.Connection, *args: Any, **kwargs: Any) -> Any:
        answer = real_read(self, *args, **kwargs)
        if not lost[0] and answer and naming in repr(answer):
            lost[0] = True
            self.disconnect()  # type: ignore[no-untyped-call]
            raise redis.ConnectionError("Connection reset by peer")
        return answer

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(redis.Connection, "read_response", lose_first)
        yield lost


def _lose_a_read(jobs: JobQueue, consumer: str) -> None:
    """A read of ``consumer`` whose reply is lost and that the client retries at once (nothing new the second time)."""
    with _first_reply_lost() as lost:
        jobs.enqueue(ResumeJob(_session_on(0), 99))
        started = time.monotonic()
        assert jobs.read(consumer, block_ms=1) == []
        assert time.monotonic() - started < 1.0
    assert lost[0]


def test_a_reply_lost_to_a_reset_connection_and_retried_at_once_is_handed_over_at_the_next_read(
    own_redis: RedisServer,
) -> None:
    """The client's retry sent the read again at once (well under ``_RETRIED_AFTER_S``): it used to be left to the
    claim time, as only a read that raised or took a second was suspected."""
    client = connect_redis(own_redis.url, retry_s=2.0)  # the bot's clients retry a lost connection in place
    jobs = JobQueue(client)
    jobs.ensure_group()
    _lose_a_read(jobs, "worker-1")
    assert len(_pending_of(client, 0, "worker-1")) == 1  # worker-1's, handed over by the lost reply
    assert [job.fields["version"] for job in jobs.read("worker-1", block_ms=1)] == ["99"]


def test_a_claim_whose_reply_was_lost_and_sent_again_at_once_hands_its_job_over_at_the_next_read(
    own_redis: RedisServer,
) -> None:
    """The first XAUTOCLAIM made the job this consumer's (its idle time starts again); the retry found nothing idle
    enough: the job used to wait for the next claim of a stale job, the claim time later."""
    client = connect_redis(own_redis.url, retry_s=2.0)  # the bot's clients retry a lost connection in place
    jobs = JobQueue(client)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(0), 1))
    read: Any = client.xreadgroup(keys.JOBS_GROUP, "dead", {keys.jobs(0): ">"})  # a dead worker's, never acknowledged
    entry_id = str(as_text(read[0][1][0][0]))
    time.sleep(0.6)
    with _first_reply_lost(entry_id) as lost:
        assert jobs.claim_stale("worker-1", min_idle_ms=500) == []  # sent again at once: not idle enough now
    assert lost[0]
    assert _pending_of(client, 0, "worker-1") == [entry_id]
    assert [job.entry_id for job in jobs.read("worker-1", block_ms=1)] == [entry_id]


def test_a_late_claim_and_the_history_read_hand_one_job_over_once(own_redis: RedisServer) -> None:
    """On a cluster ``claim_stale``'s late answer is kept for the next claim; a history read meanwhile found the job
    it claimed (this consumer's now): it used to be handed over by both."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    jobs = JobQueue(client)
    jobs._streams_apart = True  # as on a cluster: each shard read on its own (each_shard / one_shard)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(0), 1))
    client.xreadgroup(keys.JOBS_GROUP, "dead", {keys.jobs(0): ">"})  # a dead worker's, never acknowledged
    real_autoclaim = client.xautoclaim
    release = threading.Event()

    def slow_on_shard_0(stream: Any, *args: Any, **kwargs: Any) -> Any:
        answer = real_autoclaim(stream, *args, **kwargs)  # ran on the server: the job is worker-1's now
        if stream == keys.jobs(0):
            release.wait(5)  # shard 0's master is slow to answer (it is failing over)
        return answer

    client.xautoclaim = slow_on_shard_0  # type: ignore[method-assign,assignment]
    assert jobs.claim_stale("worker-1", min_idle_ms=0) == []  # shard 0's answer is late: kept for the next claim
    real_read = client.xreadgroup
    failed = [False]

    def fail_once_on_shard_0(group: Any, consumer: Any, streams: Any, *args: Any, **kwargs: Any) -> Any:
        if not failed[0] and keys.jobs(0) in streams and ">" in streams.values():
            failed[0] = True
            raise redis.TimeoutError("Timeout reading from socket")  # its reply may be lost: the shard rests
        return real_read(group, consumer, streams, *args, **kwargs)

    client.xreadgroup = fail_once_on_shard_0  # type: ignore[method-assign,assignment]
    assert jobs.read("worker-1", block_ms=1) == []
    time.sleep(RESTING_S + 0.1)
    first = jobs.read("worker-1", block_ms=1)  # shard 0's history: the job the late claim took
    release.set()
    time.sleep(0.2)
    second = jobs.claim_stale("worker-1", min_idle_ms=0)
    handed = [job.job_id for job in first + second]
    assert len(handed) == 1, f"one job handed to this worker twice: {handed}"


def test_a_lost_group_on_one_shard_is_made_again_and_the_other_shards_jobs_are_handed_over(
    own_redis: RedisServer,
) -> None:
    """NOGROUP on one shard's read used to be raised after the other shards' reads ran: the jobs they handed over
    were this consumer's, held (so the history read skipped them too), and waited for the claim time."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    jobs = JobQueue(client)
    jobs._streams_apart = True  # as on a cluster
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(1), 1))
    client.delete(keys.jobs(0))  # a failover lost shard 0's stream and its group
    real_read = client.xreadgroup

    def shard_0_late(group: Any, consumer: Any, streams: Any, *args: Any, **kwargs: Any) -> Any:
        if keys.jobs(0) in streams:
            time.sleep(0.05)  # answers (NOGROUP) after shard 1 did
        return real_read(group, consumer, streams, *args, **kwargs)

    client.xreadgroup = shard_0_late  # type: ignore[method-assign,assignment]
    assert [job.shard for job in jobs.read("worker-1", block_ms=1)] == [1]
    jobs.enqueue(ResumeJob(_session_on(0), 2))
    assert [job.shard for job in jobs.read("worker-1", block_ms=1)] == [0]  # its group is back


def test_a_job_taken_over_by_another_consumer_of_the_same_queue_is_handed_to_it_after_a_lost_read(
    own_redis: RedisServer,
) -> None:
    """Workers may share one ``JobQueue`` (the test harness's): what one holds is its own, not the other's; and a job
    taken over from a consumer (``redeliver`` finds it gone) is no longer held by it."""
    client = connect_redis(own_redis.url, retry_s=0.0)  # no retry: a read whose reply is lost raises
    jobs = JobQueue(client)
    jobs.ensure_group()

    def lose_a_read(consumer: str) -> None:
        jobs.enqueue(ResumeJob(_session_on(0), 99))
        with _first_reply_lost(), pytest.raises(redis.ConnectionError):
            jobs.read(consumer, block_ms=1)

    jobs.enqueue(ResumeJob(_session_on(0), 1))
    [job] = jobs.read("worker-1", block_ms=1)
    client.xclaim(keys.jobs(0), keys.JOBS_GROUP, "worker-2", 0, [job.entry_id])  # a claim whose reply was lost
    assert jobs.redeliver(job, "worker-1") is None  # taken over
    lose_a_read("worker-2")
    assert {found.fields["version"] for found in jobs.read("worker-2", block_ms=1, count=10)} == {"1", "99"}
    client.xclaim(keys.jobs(0), keys.JOBS_GROUP, "worker-1", 0, [job.entry_id])  # and back: worker-1's again
    lose_a_read("worker-1")
    assert {found.fields["version"] for found in jobs.read("worker-1", block_ms=1, count=10)} == {"1", "99"}


def test_on_a_cluster_a_reply_lost_and_retried_at_once_is_handed_over_at_the_next_read(
    cluster: RedisClusterServers,
) -> None:
    client = connect_redis(cluster.url, retry_s=2.0)  # the cluster client retries each failed attempt itself
    client.flushall(target_nodes="primaries")
    jobs = JobQueue(client)
    jobs.ensure_group()
    _lose_a_read(jobs, "worker-1")
    found: list[str] = []

    def read_some() -> bool:  # the retried read may answer late (after the other shards): its answer is the next's
        found.extend(job.fields["version"] for job in jobs.read("worker-1", block_ms=1))
        return bool(found)

    wait_until(read_some, "the lost job is read", timeout_s=1.0)
    assert found == ["99"]


def test_a_job_whose_ack_failed_is_no_longer_held_and_a_lost_read_hands_it_over_again(
    own_redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It is still this consumer's, pending: it used to stay held for good (and never come back here)."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(0), 1))
    [job] = jobs.read("worker-1", block_ms=1)

    def cut_off(*_args: Any, **_kwargs: Any) -> Any:
        raise redis.ConnectionError("Connection refused")

    with monkeypatch.context() as patched:
        patched.setattr(redis.client.Pipeline, "execute", cut_off)
        with pytest.raises(redis.ConnectionError):
            jobs.ack(job)
    jobs.enqueue(ResumeJob(_session_on(0), 99))
    with _first_reply_lost(), pytest.raises(redis.ConnectionError):
        jobs.read("worker-1", block_ms=1)
    assert {found.fields["version"] for found in jobs.read("worker-1", block_ms=1, count=10)} == {"1", "99"}


def test_a_job_whose_handler_escaped_is_let_go_and_the_next_stale_claim_hands_it_over_again(
    own_redis: RedisServer,
) -> None:
    """The worker's handler raised out to ``JobPool``'s boundary (``_end``'s audit or report failed): no ack, no retry,
    no hand-back. The pool lets it go; it used to stay held by this consumer for good, every claim of it dropped (an
    XAUTOCLAIM makes it this consumer's again and resets its idle time), so it never ran again."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(0), 1))
    [job] = jobs.read("worker-1", block_ms=1)
    jobs.let_go(job, "worker-1")  # what JobPool's boundary does (``escaped``) once the handler raised
    claimed = jobs.claim_stale("worker-1", min_idle_ms=0)
    assert [found.entry_id for found in claimed] == [job.entry_id], "the abandoned job is never run here again"


def test_a_lost_read_then_a_lost_group_makes_the_group_again_and_reads_go_on(own_redis: RedisServer) -> None:
    """A read whose reply was lost (unsure) and then the group lost (a restart without persistence, a failover): the
    next read's history read raised NOGROUP uncaught and the shard stayed unsure, so every later read raised the same
    and the group was never made again by this worker."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(0), 1))
    with _first_reply_lost(), pytest.raises(redis.ConnectionError):
        jobs.read("worker-1", block_ms=1)
    for shard in keys.shards():
        client.delete(keys.jobs(shard))  # the server came back without the streams and their group
    jobs.enqueue(ResumeJob(_session_on(0), 2))
    assert [job.fields["version"] for job in jobs.read("worker-1", block_ms=1)] == ["2"]
    assert client.xinfo_groups(keys.jobs(0)), "the group was never made again"
    jobs.enqueue(ResumeJob(_session_on(0), 3))
    assert [job.fields["version"] for job in jobs.read("worker-1", block_ms=1)] == ["3"]


def test_a_lost_group_on_one_shard_leaves_the_other_shards_history_to_the_next_read(own_redis: RedisServer) -> None:
    """On one server one history read covers every unsure shard: NOGROUP on one of them must not drop the others'
    lost jobs (they would wait out the claim time)."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(1), 1))
    with _first_reply_lost(), pytest.raises(redis.ConnectionError):
        jobs.read("worker-1", block_ms=1)  # every shard unsure; shard 1's job is worker-1's now
    client.delete(keys.jobs(0))
    assert jobs.read("worker-1", block_ms=1) == []  # NOGROUP: shard 0's group made again
    assert [job.fields["version"] for job in jobs.read("worker-1", block_ms=1)] == ["1"]


def test_a_job_acked_while_its_history_is_read_is_not_handed_over_again(own_redis: RedisServer) -> None:
    """The history read's reply names a job running here; the runner acknowledges it before the reply is handed over:
    the acknowledged, deleted job used to be handed over again and run twice."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(0), 1))
    [running] = jobs.read("worker-1", block_ms=1)
    jobs.enqueue(ResumeJob(_session_on(0), 2))
    with _first_reply_lost(), pytest.raises(redis.ConnectionError):
        jobs.read("worker-1", block_ms=1)
    real_read = client.xreadgroup

    def ack_meanwhile(group: Any, consumer: Any, streams: Any, *args: Any, **kwargs: Any) -> Any:
        answer = real_read(group, consumer, streams, *args, **kwargs)
        if "0" in streams.values():
            jobs.ack(running)  # the runner thread finishes the job now
        return answer

    client.xreadgroup = ack_meanwhile  # type: ignore[method-assign,assignment]
    handed = jobs.read("worker-1", block_ms=1, count=10)
    assert [job.fields["version"] for job in handed] == ["2"], "an acknowledged job handed over again"


def test_a_job_acked_while_a_claim_takes_it_is_not_handed_over_again(
    own_redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for a stale claim: its reply names a job this consumer runs (a heartbeat was late), acknowledged
    before the reply is handed over."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    jobs = JobQueue(client)
    jobs.ensure_group()
    jobs.enqueue(ResumeJob(_session_on(0), 1))
    [running] = jobs.read("worker-1", block_ms=1)
    real_execute = redis.client.Pipeline.execute

    def ack_meanwhile(pipeline: redis.client.Pipeline, *args: Any, **kwargs: Any) -> Any:
        claims = any(command[0] == "XAUTOCLAIM" for command, _options in pipeline.command_stack)
        answer = real_execute(pipeline, *args, **kwargs)
        if claims:
            jobs.ack(running)  # the runner thread finishes the job now
        return answer

    monkeypatch.setattr(redis.client.Pipeline, "execute", ack_meanwhile)
    assert jobs.claim_stale("worker-1", min_idle_ms=0) == [], "an acknowledged job handed over again"
