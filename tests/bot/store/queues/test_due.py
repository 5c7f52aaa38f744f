"""A claim of the outbox or the schedule whose reply is lost (the client gave up waiting, the server ran the claim
later) has taken its entries all the same: the queue's next claim in that client takes them back at once, in its one
round trip, and nobody else gets them meanwhile. They used to stay leased to nobody until the lease ran out (30 s for
the outbox, 60 s for the schedule)."""

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import cast

import pytest
import redis

from bench.round_trips import commands_sent
from bot.domain.records import PolicySummary
from bot.services import connect_redis
from bot.store import keys
from bot.store.queues.outbox import Outbox, OutboxEntry, post_message
from bot.store.queues.schedule import Schedule
from bot.store.queues.shard_trouble import RESTING_S
from state import RedisServer
from state.redis_cluster import RedisClusterServers
from tests.bot.support.approval_requests import SID, an_approval_request
from tests.bot.support.doomed_worker import wait_until
from tests.outage import redis_paused

_TIMEOUT_S = 0.3  # the client gives up on a reply after this: the paused server's reply is lost
_OUTBOX_LEASE_S = 30.0
_NOW = datetime(2026, 11, 30, 12, 5, tzinfo=UTC)


def _entry() -> OutboxEntry:
    return OutboxEntry("post_message", {"channel": "C0OPS", "text": "hello"})


def _claims(observer: redis.Redis, entry: OutboxEntry) -> int:
    return int(observer.hget(keys.outbox_claims(entry.shard), entry.entry_id) or 0)


def test_an_outbox_claim_whose_reply_was_lost_is_handed_over_by_the_next_claim_and_to_nobody_else(
    own_redis: RedisServer,
) -> None:
    outbox = Outbox(connect_redis(own_redis.url, retry_s=0.0, timeout_s=_TIMEOUT_S))
    observer = connect_redis(own_redis.url, retry_s=1.0)
    assert outbox.claim(lease_s=_OUTBOX_LEASE_S) == []  # a dispatcher at work: its script is loaded
    entry = _entry()
    outbox.send_later(entry)
    with redis_paused(own_redis), pytest.raises(redis.TimeoutError):
        outbox.claim(lease_s=_OUTBOX_LEASE_S)  # sent; the client gives up before the server answers
    wait_until(lambda: _claims(observer, entry) == 1, "the paused claim ran")
    assert Outbox(observer).claim(lease_s=_OUTBOX_LEASE_S) == []  # another dispatcher: leased, not its

    assert outbox.pending() == 1  # (its client connects again, after the connection it gave up on)
    with commands_sent(observer) as sent:
        started = time.monotonic()
        [again] = outbox.claim(lease_s=_OUTBOX_LEASE_S)
        took_s = time.monotonic() - started
    assert took_s < 1.0  # at once, not after the lease
    assert [command.split()[0] for command in sent] == ["EVALSHA"] * len(keys.shards())  # one pipeline, as ever
    assert again.entry_id == entry.entry_id
    assert again.claims == 1  # one holder so far: nobody may have posted it
    assert outbox.claim(lease_s=_OUTBOX_LEASE_S) == []  # handed over once
    assert Outbox(observer).claim(lease_s=_OUTBOX_LEASE_S) == []


def test_a_claim_sent_again_by_the_clients_retry_returns_what_its_first_send_took(own_redis: RedisServer) -> None:
    outbox = Outbox(connect_redis(own_redis.url, retry_s=3.0, timeout_s=_TIMEOUT_S))
    observer = connect_redis(own_redis.url, retry_s=1.0)
    assert outbox.claim(lease_s=_OUTBOX_LEASE_S) == []
    entry = _entry()
    outbox.send_later(entry)
    got: list[OutboxEntry] = []
    with redis_paused(own_redis):
        claiming = threading.Thread(target=lambda: got.extend(outbox.claim(lease_s=_OUTBOX_LEASE_S)))
        claiming.start()
        time.sleep(_TIMEOUT_S * 2)  # the first send timed out: the client sends the claim again
    claiming.join()
    assert _claims(observer, entry) == 1  # the first send took it, the second found nothing due
    assert Outbox(observer).claim(lease_s=_OUTBOX_LEASE_S) == []
    got.extend(outbox.claim(lease_s=_OUTBOX_LEASE_S))  # a retry that ran first: its claim's reply was slow
    assert [claimed.entry_id for claimed in got] == [entry.entry_id]
    assert outbox.claim(lease_s=_OUTBOX_LEASE_S) == []


def _schedule_with_a_due_reminder(client: redis.Redis) -> Schedule:
    schedule = Schedule(client, clock=lambda: _NOW)
    assert schedule.take(limit=10) == []  # a worker at work: its script is loaded
    request = an_approval_request(policy=PolicySummary(name="default", remind_every_s=60))
    pipeline = client.pipeline(transaction=True)
    schedule.plan(pipeline, request)
    pipeline.execute()
    return schedule


def test_a_schedule_claim_whose_reply_was_lost_is_taken_back_and_its_writes_apply(own_redis: RedisServer) -> None:
    client = connect_redis(own_redis.url, retry_s=0.0, timeout_s=_TIMEOUT_S)
    observer = connect_redis(own_redis.url, retry_s=1.0)
    schedule = _schedule_with_a_due_reminder(client)
    due_key = keys.schedule_due(keys.shard_of(SID))
    [(entry_id, due_ms)] = cast(list[tuple[bytes, float]], observer.zrange(due_key, 0, -1, withscores=True))
    with redis_paused(own_redis), pytest.raises(redis.TimeoutError):
        schedule.take(limit=10)
    wait_until(lambda: float(observer.zscore(due_key, entry_id) or 0) > due_ms, "the paused claim ran")
    assert Schedule(observer, clock=lambda: _NOW).take(limit=10) == []  # another worker: leased, not its

    [step] = schedule.take(limit=10)
    assert step.due.kind == "remind"
    schedule.again(step, step.due, at=_NOW + timedelta(seconds=60))
    assert schedule.apply([step]) == [True]  # the lease end it holds is the one on the entry
    assert schedule.take(limit=10) == []


def test_on_a_cluster_a_shard_whose_claim_reply_was_lost_hands_its_entry_over_after_its_rest(
    cluster: RedisClusterServers,
) -> None:
    client = connect_redis(cluster.url, retry_s=0.0, timeout_s=_TIMEOUT_S)
    client.flushall(target_nodes="primaries")
    observer = connect_redis(cluster.url, retry_s=1.0)
    outbox = Outbox(client)
    assert outbox.claim(lease_s=_OUTBOX_LEASE_S) == []
    entry = post_message("C0OPS", "hello", team_id="T0TEAM", session_id=SID)
    outbox.send_later(entry)
    port = int(client.get_node_from_key(keys.outbox_due(entry.shard)).port)  # type: ignore[attr-defined]
    [master] = [node for node in cluster.nodes if node.port == port]
    with redis_paused(master):
        assert outbox.claim(lease_s=_OUTBOX_LEASE_S) == []  # the other shards answered; this one's claim is kept
        time.sleep(_TIMEOUT_S * 2)  # its client gave up on it: the reply is lost (shorter than the node timeout)
    wait_until(lambda: _claims(observer, entry) == 1, "the paused claim ran")
    assert Outbox(observer).claim(lease_s=_OUTBOX_LEASE_S) == []

    started = time.monotonic()
    found: list[str] = []

    def claim_some() -> bool:
        found.extend(claimed.entry_id for claimed in outbox.claim(lease_s=_OUTBOX_LEASE_S))
        return bool(found)

    wait_until(claim_some, "the lost entry is claimed", timeout_s=_OUTBOX_LEASE_S / 2)
    assert found == [entry.entry_id]
    assert time.monotonic() - started < RESTING_S + 1.0  # the shard rests a moment after its failed claim, then
    assert outbox.claim(lease_s=_OUTBOX_LEASE_S) == []


def test_on_a_cluster_a_schedule_claim_answered_late_keeps_its_own_lease_end(cluster: RedisClusterServers) -> None:
    client = connect_redis(cluster.url, retry_s=0.0, timeout_s=5.0)
    client.flushall(target_nodes="primaries")
    request = an_approval_request(
        policy=PolicySummary(name="default", remind_every_s=60), created_at=datetime.now(UTC) - timedelta(minutes=5)
    )
    schedule = Schedule(client)
    assert schedule.take(limit=10) == []
    pipeline = client.pipeline(transaction=True)
    schedule.plan(pipeline, request)
    pipeline.execute()
    master: redis.Redis = client.get_node_from_key(keys.schedule_due(keys.shard_of(SID))).redis_connection  # type: ignore[attr-defined]
    master.client_pause(int(_TIMEOUT_S * 2000), all=False)  # its writes (the claim) wait; it answers the cluster
    assert schedule.take(limit=10) == []  # the other shards answered: this one's claim is kept for the next
    time.sleep(_TIMEOUT_S * 3)  # answered since

    [step] = schedule.take(limit=10)
    schedule.again(step, step.due, at=datetime.now(UTC) + timedelta(seconds=60))
    assert schedule.apply([step]) == [True]  # fenced by the lease end that claim set, not this one's
