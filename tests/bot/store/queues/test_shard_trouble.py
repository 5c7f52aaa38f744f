"""On a Redis Cluster, one master in trouble costs its own shard only: the outbox's claims and the job streams'
reads keep what the other masters handed over (a pipeline over every master used to fail whole, and the other
shards' entries then waited out their lease), and the troubled shard is left alone a moment."""

import ctypes
import functools
import threading
import time

import pytest
import redis

from bot.services import connect_redis
from bot.store import keys
from bot.store.queues.jobs import JobQueue, ResumeJob
from bot.store.queues.outbox import Outbox, OutboxEntry
from bot.store.queues.shard_trouble import (
    _THREADS_PER_SHARD,
    LAGGARD_S,
    RESTING_S,
    ShardRests,
    each_shard,
    one_shard,
)
from state.redis_cluster import RedisClusterServers

_PAUSE_MS = 20_000


def _client(cluster: RedisClusterServers) -> redis.Redis:
    client = connect_redis(cluster.url, retry_s=0.5)
    client.flushall(target_nodes="primaries")
    return client


def _pause_writes(client: redis.Redis, key: str) -> redis.Redis:
    """The master holding ``key`` stops running writes (and scripts): it answers the cluster, not us."""
    master: redis.Redis = client.get_node_from_key(key).redis_connection  # type: ignore[attr-defined]
    master.client_pause(_PAUSE_MS, all=False)
    return master


def test_the_outbox_claims_what_the_healthy_masters_hold_while_one_master_answers_nothing(
    cluster: RedisClusterServers,
) -> None:
    client = _client(cluster)
    outbox = Outbox(client)
    for shard in keys.shards():
        outbox.send_later(OutboxEntry("post_message", {"channel": "C0OPS", "text": f"shard {shard}"}, shard=shard))
    troubled = _pause_writes(client, keys.outbox_due(0))
    try:
        claimed = outbox.claim(lease_s=30)
        assert sorted(entry.shard for entry in claimed) == [shard for shard in keys.shards() if shard != 0]
        started = time.monotonic()
        assert outbox.claim(lease_s=30) == []  # the troubled shard rests: not asked again at once
        assert time.monotonic() - started < 0.5
    finally:
        troubled.client_unpause()
    time.sleep(RESTING_S)
    [late] = outbox.claim(lease_s=30)
    assert late.shard == 0


def test_the_job_streams_hand_over_the_healthy_shards_jobs_while_one_master_answers_nothing(
    cluster: RedisClusterServers,
) -> None:
    client = _client(cluster)
    jobs = JobQueue(client)
    jobs.ensure_group()
    sessions = {
        keys.shard_of(f"T0TEAM:C0OPS:17000000{index}.000100"): f"T0TEAM:C0OPS:17000000{index}.000100"
        for index in range(40)
    }
    for shard in keys.shards():
        jobs.enqueue(ResumeJob(sessions[shard], 1))
    troubled = _pause_writes(client, keys.jobs(0))
    try:
        read = jobs.read("worker-1", block_ms=1, count=5)
        assert sorted(job.shard for job in read) == [shard for shard in keys.shards() if shard != 0]
        for job in read:
            jobs.ack(job)  # handled
    finally:
        troubled.client_unpause()
    time.sleep(RESTING_S)
    # The read the paused master ran once it could is handed over now; or, when its client had given up on that
    # reply (and read again, finding nothing new), its job waits as this worker's, claimed as stale: never lost.
    back = jobs.read("worker-1", block_ms=1, count=5) or jobs.claim_stale("worker-1", min_idle_ms=0)
    assert [job.shard for job in back] == [0]


def test_a_blocking_read_on_a_silent_master_waits_no_longer_than_it_asked_the_server_to(
    cluster: RedisClusterServers,
) -> None:
    client = _client(cluster)
    JobQueue(client).ensure_group()
    port = int(client.get_node_from_key(keys.jobs(0)).port)  # type: ignore[attr-defined]
    [master] = [node for node in cluster.nodes if node.port == port]
    rests = ShardRests()

    def wait_for_jobs(shard: int) -> object:
        return client.xreadgroup(keys.JOBS_GROUP, "worker-1", {keys.jobs(shard): ">"}, count=1, block=20)

    master.pause()  # SIGSTOP, briefly (under the node timeout): it answers nothing, the client retries for seconds
    try:
        started = time.monotonic()
        assert one_shard(3, 0, wait_for_jobs, rests, what="wait", missing=[], within_s=0.02 + LAGGARD_S) == []
        assert time.monotonic() - started < 0.5  # the job loop waited on the client's retries (~1.5 s here)
        started = time.monotonic()
        assert one_shard(3, 0, wait_for_jobs, rests, what="wait", missing=[], within_s=0.02 + LAGGARD_S) == []
        assert time.monotonic() - started < 0.05  # still owed an answer: not asked again
    finally:
        master.resume()


def test_an_unexpected_error_of_one_shard_is_its_own_the_others_results_are_returned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def read(shard: int) -> str:
        if shard == 0:
            raise redis.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value")
        return f"shard {shard}"

    results = each_shard(3, read, ShardRests(), what="a test read", missing=None)
    assert results == [None, "shard 1", "shard 2"]
    assert "shard=<0> | a test read failed" in caplog.text


def test_an_unexpected_error_of_every_shard_is_raised() -> None:
    def read(shard: int) -> str:
        raise redis.ResponseError(f"WRONGTYPE on shard {shard}")

    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        each_shard(3, read, ShardRests(), what="a test read", missing=None)


def test_a_bug_in_one_shards_read_is_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    def read(shard: int) -> str:
        if shard == 0:
            return _hand_over_bug()
        return f"shard {shard}"

    assert each_shard(3, read, ShardRests(), what="a test read", missing=None) == [None, "shard 1", "shard 2"]
    [record] = [record for record in caplog.records if "a test read failed" in record.getMessage()]
    assert record.exc_text is not None or record.exc_info is not None
    assert "_hand_over_bug" in caplog.text  # where it went wrong, not only what


def _hand_over_bug() -> str:
    raise KeyError("a bug after the read")


def _waiting_on(client: redis.Redis, shard: int, seconds: float) -> object:
    """An idle wait on ``shard``'s master: healthy, it answers once ``seconds`` passed (nothing wakes it)."""
    return client.blpop([keys.outbox_wake(shard)], timeout=seconds)


def _waiting_client(cluster: RedisClusterServers) -> redis.Redis:
    """A client whose replies may take a few seconds (an idle wait's, here longer than the bot's)."""
    return connect_redis(cluster.url, retry_s=0.5, timeout_s=5)


def test_idle_waits_still_blocking_on_every_shard_hold_up_no_read(cluster: RedisClusterServers) -> None:
    client, waiting = _client(cluster), _waiting_client(cluster)
    rests = ShardRests()
    for kind in range(4):  # each kind of read's idle wait, still blocking: kept late, its thread held
        for shard in keys.shards():
            wait_a_while = functools.partial(_waiting_on, waiting, seconds=1.5)
            assert one_shard(3, shard, wait_a_while, rests, what=f"wait {kind}", missing=None, within_s=0.01) is None
    started = time.monotonic()
    assert each_shard(3, lambda shard: client.ping(), rests, what="a read", missing=None) == [True, True, True]
    assert time.monotonic() - started < 0.5  # they had threads of their own: their masters answered at once
    assert not any(rests.resting(shard) for shard in keys.shards())


def test_a_read_waiting_for_this_readers_threads_rests_no_shard(cluster: RedisClusterServers) -> None:
    client, waiting = _client(cluster), _waiting_client(cluster)
    rests = ShardRests()
    for index in range(3 * _THREADS_PER_SHARD):  # every thread held by a healthy master's idle wait
        rests.submit(3, functools.partial(_waiting_on, waiting, seconds=1.5), index % 3)
    with pytest.raises(redis.TimeoutError):  # nothing sent within the second: as a silent read, backed off
        each_shard(3, lambda shard: client.ping(), rests, what="a read", missing=None)
    assert not any(rests.resting(shard) for shard in keys.shards())  # the masters were never asked: not theirs
    time.sleep(1)
    assert each_shard(3, lambda shard: client.ping(), rests, what="a read", missing=None) == [True, True, True]


def _sent_then_answered(client: redis.Redis, sent: threading.Barrier, shard: int) -> object:
    """``_waiting_on`` for 20 ms, in two steps: the wait is sent to ``shard``'s master, ``sent`` is passed, then the
    answer is read."""
    master: redis.Redis = client.get_node_from_key(keys.outbox_wake(shard)).redis_connection  # type: ignore[attr-defined]
    connection = master.connection_pool.get_connection()
    try:
        connection.send_command("BLPOP", keys.outbox_wake(shard), 0.02)  # type: ignore[no-untyped-call]
        sent.wait(timeout=10)
        return connection.read_response()
    finally:
        master.connection_pool.release(connection)


def _stall_once_passed(sent: threading.Barrier) -> None:
    """Once ``sent`` is passed, stop every thread of this process for 1.05 s (``PyDLL`` keeps the GIL through the
    call, as a long garbage collection does)."""
    sent.wait(timeout=10)
    ctypes.PyDLL(None).usleep(1_050_000)


def test_a_stall_of_this_process_rests_no_healthy_shard(cluster: RedisClusterServers) -> None:
    client = _client(cluster)
    for _ in range(5):  # before the answers were read after a stall, most tries left one shard or more resting
        rests = ShardRests()
        # The stall begins once every wait has left: a timer could fire before a busy machine ran a read's thread, and
        # a wait sent after the stall is one no master could answer during it (its shard then counted as late).
        sent = threading.Barrier(4)
        stall = threading.Thread(target=_stall_once_passed, args=(sent,))
        stall.start()
        answers = each_shard(3, functools.partial(_sent_then_answered, client, sent), rests, what="a wait", missing=1)
        stall.join()
        assert answers == [None, None, None]  # each master answered (nothing woke it) while this process stood still
        assert not any(rests.resting(shard) for shard in keys.shards())


def test_a_closed_reader_ends_its_threads_an_idle_one_at_once_a_busy_one_when_its_read_ends(
    cluster: RedisClusterServers,
) -> None:
    client, waiting = _client(cluster), _waiting_client(cluster)
    rests = ShardRests()
    before = set(threading.enumerate())
    assert each_shard(3, lambda shard: client.ping(), rests, what="a read", missing=None) == [True, True, True]
    busy = rests.submit(3, functools.partial(_waiting_on, waiting, seconds=0.5), 0)
    started = set(threading.enumerate()) - before
    assert started
    closing = time.monotonic()
    rests.close()
    assert time.monotonic() - closing < 0.1  # a read still out is not waited for
    for thread in started:
        thread.join(timeout=2)
        assert not thread.is_alive()
    assert busy.answer.done()
