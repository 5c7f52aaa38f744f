"""The outbox delivered by conversation in parallel, against a loopback Slack: order per channel, no blocking."""

import itertools
import random
import threading
import time
from collections.abc import Iterator

import pytest
import redis

from bot.domain.workspaces import OneWorkspace
from bot.slack.outbound.delivery import Deliverer
from bot.slack.outbound.lanes import lane_of
from bot.slack.outbound.web_client import KeepAliveWebClient
from bot.store import keys
from bot.store.approvals.approvals import ApprovalStore
from bot.store.queues.lane_leases import LaneLeases
from bot.store.queues.outbox import (
    BACKOFF_CAP_S,
    Outbox,
    OutboxEntry,
    backoff_s,
    post_approval,
    post_ephemeral,
    posts_in_order,
)
from tests.bot.support.fake_slack import FakeSlack
from tests.redis_targets import on_both
from tests.seconds_clock import SecondsClock

pytest_generate_tests = on_both  # a lane and its channel's pause share a slot: on a cluster too

CHANNELS = ("C0ALPHA", "C0BRAVO", "C0CHARLIE")


@pytest.fixture
def client(slack: FakeSlack) -> KeepAliveWebClient:
    return KeepAliveWebClient(token=slack.token, base_url=slack.url, timeout=5)


@pytest.fixture
def deliverer(redis_client: redis.Redis, client: KeepAliveWebClient, outbox: Outbox) -> Iterator[Deliverer]:
    deliverer = Deliverer(
        clients=OneWorkspace(client),
        outbox=outbox,
        approvals=ApprovalStore(redis_client),
        redis=redis_client,
        concurrency=4,
    )
    yield deliverer
    deliverer.close()


def _queue_interleaved(outbox: Outbox, per_channel: int) -> None:
    for index in range(per_channel):
        for channel in CHANNELS:
            outbox.send_later(OutboxEntry("post_message", {"channel": channel, "text": f"{channel} {index}"}))


def _texts(slack: FakeSlack, channel: str) -> list[str]:
    return [str(call.args["text"]) for call in slack.calls("chat.postMessage") if call.args["channel"] == channel]


def _another_dispatcher(slack: FakeSlack, outbox: Outbox, redis_client: redis.Redis) -> Deliverer:
    """Another worker's dispatcher of the same outbox (one lane at a time)."""
    return Deliverer(
        clients=OneWorkspace(KeepAliveWebClient(token=slack.token, base_url=slack.url, timeout=5)),
        outbox=outbox,
        approvals=ApprovalStore(redis_client),
        redis=redis_client,
    )


def test_each_channel_gets_its_messages_in_order_while_channels_go_in_parallel(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, client: KeepAliveWebClient
) -> None:
    slack.slow_next("chat.postMessage", 0.02, times=3 * 6)
    for channel in CHANNELS:  # queued one channel after the other
        for index in range(6):
            outbox.send_later(OutboxEntry("post_message", {"channel": channel, "text": f"{channel} {index}"}))

    assert deliverer.deliver_due(limit=100) == 18

    for channel in CHANNELS:
        assert _texts(slack, channel) == [f"{channel} {index}" for index in range(6)]
    arrivals = [str(call.args["channel"]) for call in slack.calls("chat.postMessage")]
    # One at a time, the first three calls would all go to the first channel; in parallel each channel has one.
    assert set(arrivals[:3]) == set(CHANNELS)
    assert outbox.pending() == 0
    assert client.connections_opened <= 3  # one kept-alive connection per delivering thread, not one per call


def test_threads_of_one_channel_go_in_parallel_each_in_order(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer
) -> None:
    # A busy team asks in one channel: each session's thread is its own conversation. In one lane per channel,
    # fifty agents' replies waited behind one another (bench.e2e, a model taking 200 ms: click -> reply 1.6x).
    threads = ("1700000000.000100", "1700000000.000200", "1700000000.000300")
    slack.slow_next("chat.postMessage", 0.02, times=3 * 4)
    for thread_ts in threads:  # queued one thread after the other
        for index in range(4):
            reply = {"channel": "C0ALPHA", "thread_ts": thread_ts, "text": f"{thread_ts} {index}"}
            outbox.send_later(OutboxEntry("post_message", reply))

    assert deliverer.deliver_due(limit=100) == 12

    calls = slack.calls("chat.postMessage")
    for thread_ts in threads:
        in_thread = [call.args["text"] for call in calls if call.args["thread_ts"] == thread_ts]
        assert in_thread == [f"{thread_ts} {index}" for index in range(4)]
    assert {call.args["thread_ts"] for call in calls[:3]} == set(threads)  # not the first thread's four first


def test_a_rate_limited_channel_waits_in_order_and_the_others_do_not(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    slack.fail_next("chat.postMessage", status=429, retry_after=30, channel="C0ALPHA")
    _queue_interleaved(outbox, 3)

    assert deliverer.deliver_due(limit=100) == 9
    assert _texts(slack, "C0BRAVO") == ["C0BRAVO 0", "C0BRAVO 1", "C0BRAVO 2"]
    assert _texts(slack, "C0CHARLIE") == ["C0CHARLIE 0", "C0CHARLIE 1", "C0CHARLIE 2"]
    assert _texts(slack, "C0ALPHA") == ["C0ALPHA 0"]  # refused; the two behind it were not sent
    assert outbox.pending() == 3

    clock.now += 29
    assert deliverer.deliver_due(limit=100) == 0  # the whole lane waits for Retry-After
    clock.now += 1
    assert deliverer.deliver_due(limit=100) == 3
    assert _texts(slack, "C0ALPHA") == ["C0ALPHA 0", "C0ALPHA 0", "C0ALPHA 1", "C0ALPHA 2"]
    assert [call.status for call in slack.calls("chat.postMessage") if call.args["channel"] == "C0ALPHA"] == [
        429,
        200,
        200,
        200,
    ]
    assert outbox.pending() == 0


def test_parts_of_a_long_reply_stay_in_order_under_parallel_delivery(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    slack.fail_next("chat.postMessage", status=500, channel="C0ALPHA")
    parts = [{"channel": "C0ALPHA", "thread_ts": "1.1", "text": f"part {index}"} for index in range(3)]
    transaction = redis_client.pipeline(transaction=True)
    for entry in posts_in_order(parts, team_id="T0TEST"):
        outbox.add(transaction, entry)
    transaction.execute()
    deliverer.deliver_due(limit=100)  # the first part fails: the thread waits for its retry
    _queue_interleaved(outbox, 1)

    deliverer.deliver_due(limit=100)
    # The channel's top level is another conversation: it does not wait for the thread's retry.
    assert _texts(slack, "C0ALPHA") == ["part 0", "C0ALPHA 0"]
    clock.now += 2
    while deliverer.deliver_due(limit=100):
        clock.now += 2

    thread = [call for call in slack.calls("chat.postMessage") if call.args.get("thread_ts") == "1.1"]
    assert (thread[0].args["text"], thread[0].status) == ("part 0", 500)
    assert [call.args["text"] for call in thread[1:]] == ["part 0", "part 1", "part 2"]
    assert _texts(slack, "C0BRAVO") == ["C0BRAVO 0"]


def test_entries_a_killed_deliverer_held_come_back_after_the_lease_and_are_posted_once_in_order(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    _queue_interleaved(outbox, 4)
    held = outbox.claim(lease_s=30, limit=100)  # a dispatcher takes everything, then dies without sending
    assert len(held) == 12

    assert deliverer.deliver_due(limit=100) == 0
    clock.now += 31
    assert deliverer.deliver_due(limit=100) == 12
    for channel in CHANNELS:
        assert _texts(slack, channel) == [f"{channel} {index}" for index in range(4)]
    assert outbox.pending() == 0


def test_a_deliverer_killed_after_posting_leaves_no_second_copy(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    _queue_interleaved(outbox, 2)
    first, *_rest = outbox.claim(lease_s=30, limit=100)
    # The dying dispatcher got its first post out, then died before recording it.
    dying_outbox = _DiesBeforeCompleting(outbox)
    dying = Deliverer(
        clients=OneWorkspace(KeepAliveWebClient(token=slack.token, base_url=slack.url, timeout=5)),
        outbox=dying_outbox,  # type: ignore[arg-type]
        approvals=ApprovalStore(redis_client),
        redis=redis_client,
    )
    with pytest.raises(_Died):
        dying.deliver(first)
    assert len(slack.calls("chat.postMessage")) == 1

    clock.now += 31
    assert deliverer.deliver_due(limit=100) == 6
    for channel in CHANNELS:
        assert _texts(slack, channel) == [f"{channel} 0", f"{channel} 1"]  # the first post was found, not redone


def test_lanes_follow_the_conversation() -> None:
    session_id = "T0TEST:C0ALPHA:1700000000.000100"
    thread = "C0ALPHA/1700000000.000100"
    assert lane_of(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": "hi"})) == "C0ALPHA"
    reply = {"channel": "C0ALPHA", "thread_ts": "1700000000.000100", "text": "done"}
    assert lane_of(OutboxEntry("post_message", reply)) == thread  # the session's thread: with its approvals
    assert lane_of(OutboxEntry("post_approval", {"session_id": session_id, "approval_id": "a"})) == thread
    assert lane_of(OutboxEntry("update_approval", {"session_id": session_id, "approval_id": "a"})) == thread
    other_thread = {"channel": "C0ALPHA", "thread_ts": "1700000000.000900", "text": "elsewhere"}
    assert lane_of(OutboxEntry("post_message", other_thread)) == "C0ALPHA/1700000000.000900"
    assert lane_of(OutboxEntry("post_approval", {"session_id": "api:r1", "approval_id": "b"})) == "api:r1"
    assert lane_of(OutboxEntry("post_approval_copy", {"session_id": session_id, "user": "U0ONCALL"})) == "U0ONCALL"
    assert lane_of(OutboxEntry("post_message", {"channel": "U0ONCALL", "text": "dm"})) == "U0ONCALL"
    assert lane_of(OutboxEntry("publish_home", {"user": "U0ONCALL"})) == "home:U0ONCALL"


class _Died(BaseException):
    """The process died here (nothing in it handles this, as nothing handles SIGKILL)."""


class _DiesBeforeCompleting:
    """The outbox as a dispatcher sees it, up to the moment it dies: before its post is recorded."""

    def __init__(self, outbox: Outbox) -> None:
        self._outbox = outbox

    def complete_post(self, *args: object, **kwargs: object) -> str:
        raise _Died

    def __getattr__(self, name: str) -> object:
        return getattr(self._outbox, name)


def test_a_message_queued_after_a_rate_limited_one_does_not_overtake_it_in_a_later_batch(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    slack.fail_next("chat.postMessage", status=429, retry_after=30, channel="C0ALPHA")
    _queue_interleaved(outbox, 2)
    deliverer.deliver_due(limit=100)
    assert _texts(slack, "C0ALPHA") == ["C0ALPHA 0"]  # refused

    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": "C0ALPHA later"}))
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0BRAVO", "text": "C0BRAVO later"}))
    for _second in range(29):
        clock.now += 1
        deliverer.deliver_due(limit=100)
    assert _texts(slack, "C0ALPHA") == ["C0ALPHA 0"]  # the channel waits for its refused message
    assert _texts(slack, "C0BRAVO") == ["C0BRAVO 0", "C0BRAVO 1", "C0BRAVO later"]

    clock.now += 1
    while deliverer.deliver_due(limit=100):
        clock.now += 1
    assert _texts(slack, "C0ALPHA") == ["C0ALPHA 0", "C0ALPHA 0", "C0ALPHA 1", "C0ALPHA later"]


def test_two_dispatchers_never_send_to_one_channel_at_once(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    other = _another_dispatcher(slack, outbox, redis_client)
    for index in range(6):
        outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": f"C0ALPHA {index}"}))
    slack.slow_next("chat.postMessage", 0.3)  # the first dispatcher is in the middle of its first post...
    first = threading.Thread(target=deliverer.deliver_due, kwargs={"limit": 3})
    first.start()
    slack.wait_for("chat.postMessage", count=1, timeout=5)
    assert other.deliver_due(limit=3) == 3  # ...when the second takes the next three: they wait
    first.join(10)
    assert _texts(slack, "C0ALPHA") == ["C0ALPHA 0", "C0ALPHA 1", "C0ALPHA 2"]

    clock.now += 1
    while other.deliver_due(limit=3):
        clock.now += 1
    assert _texts(slack, "C0ALPHA") == [f"C0ALPHA {index}" for index in range(6)]


def _hello_while_another_holds_alpha(
    slack: FakeSlack, outbox: Outbox, redis_client: redis.Redis, sending: str
) -> tuple[Deliverer, LaneLeases, str]:
    """A dispatcher, "hello" queued for C0ALPHA, and C0ALPHA's lane taken (for ``sending``) by another dispatcher.

    Returns:
        The dispatcher, the other's leases and the token it holds the lane with.
    """
    dispatcher = _another_dispatcher(slack, outbox, redis_client)
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": "hello"}))
    other = LaneLeases(redis_client, lease_s=30, now_ms=outbox.now_ms)
    token, _taken, _paused = other.take([("C0ALPHA", sending)])
    return dispatcher, other, token


def test_a_channel_held_by_a_dispatcher_that_died_is_free_again_after_its_lease(
    slack: FakeSlack, outbox: Outbox, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    survivor, _dead, _token = _hello_while_another_holds_alpha(slack, outbox, redis_client, "an entry it was sending")
    # ...then the other dispatcher died

    assert survivor.deliver_due() == 1
    assert slack.calls("chat.postMessage") == []  # the channel is still taken
    clock.now += 29
    assert survivor.deliver_due() == 1
    assert slack.calls("chat.postMessage") == []
    clock.now += 1
    assert survivor.deliver_due() == 1
    assert _texts(slack, "C0ALPHA") == ["hello"]


def test_a_channel_another_dispatcher_is_sending_to_is_tried_again_within_moments_not_after_its_lease(
    slack: FakeSlack, outbox: Outbox, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    # Two workers dispatch the outbox and every request of a busy team lands in one channel: a dispatcher that
    # waited out the other's lease (or a whole second) made that channel crawl (bench.cluster: 103 -> 12 sessions/s).
    second, first, token = _hello_while_another_holds_alpha(slack, outbox, redis_client, "an entry it is sending")

    assert second.deliver_due() == 1  # the channel is busy: the entry goes back...
    assert slack.calls("chat.postMessage") == []
    assert second.idle_wait_s(1.0) <= 0.05  # no new entry will wake its dispatcher: it must not sleep a second
    first.leave(token, [("C0ALPHA", None, 0.0)])  # ...and the first dispatcher is done a moment later
    clock.now += 0.05
    assert second.deliver_due() == 1
    assert _texts(slack, "C0ALPHA") == ["hello"]


def test_a_lane_held_for_an_entry_lets_only_that_entry_or_an_earlier_one_through(
    redis_client: redis.Redis, clock: SecondsClock
) -> None:
    leases = LaneLeases(redis_client, lease_s=30, now_ms=lambda: int(clock() * 1000))
    token, [taken], _paused = leases.take([("C0ALPHA", "0002")])
    assert taken is None
    leases.leave(token, [("C0ALPHA", "0002", 5.0)])  # its attempt failed: retried in 5 s

    _token, [later], _paused = leases.take([("C0ALPHA", "0003")])
    assert later is not None
    assert 30 < later <= 35  # held for the retry's delay plus a lease
    _token, [earlier], _paused = leases.take([("C0ALPHA", "0001")])
    assert earlier is None
    _token, [busy], _paused = leases.take([("C0ALPHA", "0002")])
    assert busy is not None  # the earlier one's delivery has the lane now
    clock.now += 30
    _token, [free], _paused = leases.take([("C0ALPHA", "0002")])
    assert free is None  # that delivery went silent: its lease ran out


def test_an_idle_dispatcher_sleeps_until_a_new_entry_or_the_soonest_retry_not_in_a_busy_loop(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    # It slept 10 ms at a time whatever was queued: an idle worker claimed every shard a hundred times a second.
    assert deliverer.deliver_due() == 0
    assert deliverer.idle_wait_s(1.0) == 1.0  # nothing queued: a new entry wakes it
    slack.fail_next("chat.postMessage", status=429, retry_after=30, channel="C0ALPHA")
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": "hello"}))
    assert deliverer.deliver_due() == 1  # refused: due again in 30 s, and nothing will wake it for that
    assert deliverer.deliver_due() == 0
    assert deliverer.idle_wait_s(1.0) == 1.0
    assert deliverer.idle_wait_s(60.0) == pytest.approx(30.0, abs=0.01)
    clock.now += 29.5
    assert deliverer.idle_wait_s(60.0) == pytest.approx(0.5, abs=0.01)
    clock.now += 1
    assert deliverer.idle_wait_s(60.0) == 0.0  # due already: no sleep
    assert deliverer.deliver_due() == 1
    assert _texts(slack, "C0ALPHA") == ["hello", "hello"]
    assert deliverer.idle_wait_s(1.0) == 1.0


def test_a_429_in_one_thread_pauses_the_whole_channel_for_every_dispatcher_and_no_other_channel(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    # Slack limits posting per channel: with a lane per thread, the other threads kept posting into the limit,
    # each earning its own 429 (and, counted as a failed attempt, a look for copies before its retry).
    slack.fail_next("chat.postMessage", status=429, retry_after=30, channel="C0ALPHA")
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "thread_ts": "1.1", "text": "first"}))
    assert deliverer.deliver_due() == 1  # refused: Retry-After 30 s

    other = _another_dispatcher(slack, outbox, redis_client)
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "thread_ts": "2.2", "text": "other thread"}))
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": "top level"}))
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0BRAVO", "thread_ts": "3.3", "text": "elsewhere"}))
    assert other.deliver_due() == 3
    assert _texts(slack, "C0BRAVO") == ["elsewhere"]
    assert _texts(slack, "C0ALPHA") == ["first"]  # the refused attempt only: the channel waits

    clock.now += 29
    assert other.deliver_due() == 2  # still paused: looked at and put back
    assert _texts(slack, "C0ALPHA") == ["first"]
    for _ in range(5):  # the entries put back while it was paused come due within a second or so
        clock.now += 1
        other.deliver_due()
    assert outbox.pending() == 0
    assert sorted(_texts(slack, "C0ALPHA")) == ["first", "first", "other thread", "top level"]
    assert [call.status for call in slack.calls("chat.postMessage")].count(429) == 1


def test_a_lane_a_dispatcher_took_over_a_second_ago_is_looked_at_each_second_not_every_10_ms(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    # A dead dispatcher keeps the lanes of its batch until the lease ends: the others put those entries back
    # 10 ms at a time, one transaction each, for the whole lease.
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": "hello"}))
    dead = LaneLeases(redis_client, lease_s=30, now_ms=outbox.now_ms)
    dead.take([("C0ALPHA", "an entry it was sending")])

    assert deliverer.deliver_due() == 1  # taken moments ago: probably done in moments
    assert outbox.next_due_s() == pytest.approx(0.01, abs=0.005)
    clock.now += 2
    assert deliverer.deliver_due() == 1  # taken two seconds ago: slow or dead
    assert outbox.next_due_s() == pytest.approx(1.0, abs=0.005)
    clock.now += 28
    assert deliverer.deliver_due() == 1  # its lease is over
    assert _texts(slack, "C0ALPHA") == ["hello"]


def _stepping(deliverer: Deliverer, clock: SecondsClock, *, seconds: float, step_s: float = 1.0) -> None:
    """Deliver what is due every ``step_s`` of the outbox clock, for ``seconds``."""
    for _ in range(int(seconds / step_s)):
        deliverer.deliver_due(limit=100)
        clock.now += step_s


def _stored_attempts(outbox: Outbox) -> list[int]:
    return [entry.attempts for entry in outbox.claim(lease_s=0.001, limit=100)]


def test_429s_are_no_failed_attempts_neither_growing_the_backoff_nor_counting_toward_giving_up(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    # Counted, four 429s made the next error's backoff 16 s (and a few more would have reached 256 s).
    slack.fail_next("chat.postMessage", status=429, retry_after=5, times=4, channel="C0ALPHA")
    slack.fail_next("chat.postMessage", status=503, channel="C0ALPHA")
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": "hello"}))
    for _ in range(4):
        assert deliverer.deliver_due() == 1
        clock.now += 5
    assert deliverer.deliver_due() == 1  # the 503: the first failed attempt

    statuses = [call.status for call in slack.calls("chat.postMessage")]
    assert statuses == [429, 429, 429, 429, 503]
    due_s = outbox.next_due_s()
    assert due_s is not None
    assert due_s <= backoff_s(1)
    clock.now += due_s
    assert _stored_attempts(outbox) == [1]


def test_a_429_on_another_method_pauses_that_method_in_the_workspace_not_the_channels_posts(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    # Slack limits chat.postMessage per channel and its other methods per workspace: a 429 on an ephemeral paused
    # the channel's posts, and let the workspace's other ephemerals run into the limit.
    slack.fail_next("chat.postEphemeral", status=429, retry_after=30)
    outbox.send_later(post_ephemeral("C0ALPHA", team_id="T0TEST", user="U0ONE", text="first"))
    assert deliverer.deliver_due() == 1

    other = _another_dispatcher(slack, outbox, redis_client)
    posted = {"channel": "C0ALPHA", "thread_ts": "1.1", "text": "posted"}  # a thread: a lane of its own
    outbox.send_later(OutboxEntry("post_message", posted, team_id="T0TEST"))
    outbox.send_later(post_ephemeral("C0BRAVO", team_id="T0TEST", user="U0TWO", text="elsewhere"))
    assert other.deliver_due() == 2
    assert _texts(slack, "C0ALPHA") == ["posted"]
    assert len(slack.calls("chat.postEphemeral")) == 1  # the refused one only: the method waits

    _stepping(other, clock, seconds=50)
    assert outbox.pending() == 0
    assert [call.status for call in slack.calls("chat.postEphemeral")] == [429, 200, 200]


def test_after_a_pause_the_waiting_threads_of_a_channel_start_a_second_apart_not_all_at_its_end(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    # Every thread of the channel waiting for the pause fired the instant it ended: 38-78 calls to one channel in
    # one second, each answered 429 again.
    slack.fail_next("chat.postMessage", status=429, retry_after=5, channel="C0ALPHA")
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "thread_ts": "0.1", "text": "first"}))
    assert deliverer.deliver_due() == 1
    for index in range(12):
        payload = {"channel": "C0ALPHA", "thread_ts": f"{index + 1}.1", "text": f"thread {index}"}
        outbox.send_later(OutboxEntry("post_message", payload))

    posted_at: list[float] = []
    for _ in range(160):  # 40 s, a quarter of a second at a time
        before = len(_texts(slack, "C0ALPHA"))
        deliverer.deliver_due(limit=100)
        posted_at.extend([clock.now] * (len(_texts(slack, "C0ALPHA")) - before))
        clock.now += 0.25
    assert outbox.pending() == 0
    assert len(posted_at) == 13
    assert all(later - earlier >= 1.0 for earlier, later in itertools.pairwise(posted_at)), posted_at


def test_catch_up_after_an_outage_is_bounded_by_the_backoff_cap(
    slack: FakeSlack, outbox: Outbox, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    # 503s, then 429s (each counted as an attempt), then a minute of refused connections: the backoff had reached
    # 128 s, and the backlog waited that long after Slack recovered.
    client = KeepAliveWebClient(token=slack.token, base_url=slack.url, timeout=5, retry_handlers=[])
    deliverer = Deliverer(
        clients=OneWorkspace(client),
        outbox=outbox,
        approvals=ApprovalStore(redis_client),
        redis=redis_client,
        concurrency=4,
        jitter=random.Random(7),
    )
    for index in range(10):
        outbox.send_later(OutboxEntry("post_message", {"channel": f"C0CHAN{index}", "text": f"post {index}"}))
    with slack.answering(503):
        _stepping(deliverer, clock, seconds=10)
    with slack.answering(429, retry_after=5):
        _stepping(deliverer, clock, seconds=20)
    with slack.refusing():
        _stepping(deliverer, clock, seconds=60)

    recovered = clock.now
    while outbox.pending():
        assert clock.now - recovered <= BACKOFF_CAP_S + 1, "the backlog waits longer than the backoff cap"
        _stepping(deliverer, clock, seconds=0.5, step_s=0.5)
    deliverer.close()
    assert sorted(_texts_anywhere(slack)) == sorted(f"post {index}" for index in range(10))


def test_a_request_made_through_the_api_is_paused_with_its_channel() -> None:
    # Its lane was the request's own, and so was its pause: Retry-After never held it back.
    by_api = post_approval("api:request-1", "approval-1", team_id="T0TEST", channel="C0ALPHA")
    in_thread = OutboxEntry("post_message", {"channel": "C0ALPHA", "thread_ts": "1.1", "text": "x"}, team_id="T0TEST")
    assert lane_of(by_api) != lane_of(in_thread)  # its own lane: posted in parallel with the threads
    assert keys.outbox_channel_pause(lane_of(by_api)) == keys.outbox_channel_pause(lane_of(in_thread))


def _texts_anywhere(slack: FakeSlack) -> list[str]:
    return [str(call.args["text"]) for call in slack.calls("chat.postMessage") if call.ok]


def test_a_conversation_slow_to_send_does_not_hold_back_the_next_batch(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer
) -> None:
    # One lane of the batch takes 2 s (Slack here; a Redis master gone silent in a failover, alike): the batch
    # leaves it running, and the next batch, of another conversation, goes out meanwhile.
    slack.slow_next("chat.postMessage", 2.0)
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0ALPHA", "text": "C0ALPHA 0"}))
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0BRAVO", "text": "C0BRAVO 0"}))
    started = time.monotonic()
    assert deliverer.deliver_due() == 2
    outbox.send_later(OutboxEntry("post_message", {"channel": "C0CHARLIE", "text": "C0CHARLIE 0"}))
    assert deliverer.deliver_due() == 1
    assert time.monotonic() - started < 1.5
    assert _texts(slack, "C0CHARLIE") == ["C0CHARLIE 0"]
    assert outbox.pending() == 1  # the slow one is still being sent

    assert deliverer.settle()
    assert outbox.pending() == 0
    assert _texts(slack, "C0ALPHA") == ["C0ALPHA 0"]
    assert _texts(slack, "C0BRAVO") == ["C0BRAVO 0"]
