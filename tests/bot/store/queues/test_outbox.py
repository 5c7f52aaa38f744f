"""The outbox against a loopback Slack: retries, backoff, Retry-After, parking, leases."""

import pytest
import redis
from slack_sdk import WebClient

from bench.round_trips import counting_client
from bot.domain.workspaces import OneWorkspace
from bot.slack.outbound.delivery import Deliverer
from bot.slack.outbound.retry_after import DEFAULT_S
from bot.store.approvals.approvals import ApprovalStore
from bot.store.queues.outbox import Outbox, OutboxEntry, backoff_s, posts_in_order
from tests.bot.support.fake_slack import FakeSlack
from tests.seconds_clock import SecondsClock


@pytest.fixture
def deliverer(redis_client: redis.Redis, slack: FakeSlack, outbox: Outbox) -> Deliverer:
    client = WebClient(token=slack.token, base_url=slack.url, timeout=2)
    return Deliverer(
        clients=OneWorkspace(client), outbox=outbox, approvals=ApprovalStore(redis_client), redis=redis_client
    )


def _post(text: str) -> OutboxEntry:
    return OutboxEntry("post_message", {"channel": "C0OPS", "text": text})


def test_a_server_error_backs_off_then_delivers(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    slack.fail_next("chat.postMessage", status=500, times=2)
    outbox.send_later(_post("hello"))

    assert deliverer.deliver_due() == 1  # attempt 1: 500
    assert deliverer.deliver_due() == 0  # not due again yet
    clock.now += backoff_s(1)
    assert deliverer.deliver_due() == 1  # attempt 2: 500
    clock.now += backoff_s(1)
    assert deliverer.deliver_due() == 0  # the second backoff is longer
    clock.now += backoff_s(2)
    assert deliverer.deliver_due() == 1  # attempt 3: delivered

    assert [call.status for call in slack.calls("chat.postMessage")] == [500, 500, 200]
    assert outbox.pending() == 0


def test_a_rate_limit_waits_exactly_retry_after(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    slack.fail_next("chat.postMessage", status=429, retry_after=7)
    outbox.send_later(_post("hello"))

    deliverer.deliver_due()
    clock.now += 6.9
    assert deliverer.deliver_due() == 0
    clock.now += 0.2
    assert deliverer.deliver_due() == 1
    assert [call.status for call in slack.calls("chat.postMessage")] == [429, 200]


def test_a_rate_limit_whose_retry_after_cannot_be_read_waits_a_second_and_delivers(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    slack.fail_next("chat.postMessage", status=429, retry_after="in a little while")
    outbox.send_later(_post("hello"))

    assert deliverer.deliver_due() == 1  # put back, not raised out of the delivery
    clock.now += DEFAULT_S - 0.1
    assert deliverer.deliver_due() == 0
    clock.now += 0.2
    assert deliverer.deliver_due() == 1
    assert [call.status for call in slack.calls("chat.postMessage")] == [429, 200]
    assert outbox.pending() == 0


def test_a_permanent_error_is_parked_with_its_reason_after_a_few_attempts(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    slack.error_next("chat.postMessage", "channel_not_found", times=10)
    outbox.send_later(_post("hello"))

    for _ in range(10):
        deliverer.deliver_due()
        clock.now += 600

    assert len(slack.calls("chat.postMessage")) == 5
    assert outbox.pending() == 0
    [parked] = outbox.dead_letters().values()
    assert "channel_not_found" in parked["why"]
    assert parked["entry"]["payload"]["text"] == "hello"


def test_an_entry_claimed_by_a_dispatcher_that_died_comes_back_after_its_lease(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    outbox.send_later(_post("hello"))
    [claimed] = outbox.claim(lease_s=30)  # a dispatcher takes it, then dies without sending
    assert claimed.kind == "post_message"

    assert deliverer.deliver_due() == 0
    clock.now += 31
    assert deliverer.deliver_due() == 1
    assert [call.args["text"] for call in slack.calls("chat.postMessage")] == ["hello"]


def test_an_update_waits_for_its_post(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    outbox.send_later(OutboxEntry("update_approval", {"session_id": "T:C:1.2", "approval_id": "a" * 24}))
    # Unknown approval: nothing to update, the entry completes without a Slack call.
    assert deliverer.deliver_due() == 1
    assert slack.calls("chat.update") == []
    assert outbox.pending() == 0


def test_a_slow_slack_times_out_and_is_retried_not_lost_nor_posted_twice(
    slack: FakeSlack, outbox: Outbox, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    impatient = Deliverer(
        clients=OneWorkspace(WebClient(token=slack.token, base_url=slack.url, timeout=1)),
        outbox=outbox,
        approvals=ApprovalStore(redis_client),
        redis=redis_client,
    )
    slack.slow_next("chat.postMessage", 1.5)
    outbox.send_later(_post("hello"))

    impatient.deliver_due()  # times out: Slack may or may not have posted it, so it is tried again
    assert outbox.pending() == 1
    clock.now += backoff_s(1)
    impatient.deliver_due()  # Slack had posted it: the retry finds that copy by its marker
    assert outbox.pending() == 0
    assert len(slack.calls("chat.postMessage")) == 1
    assert [message["text"] for message in slack.messages("C0OPS")] == ["hello"]


def test_a_retry_posts_when_the_earlier_attempt_did_not(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    slack.fail_next("chat.postMessage", status=503, retry_after=None)
    outbox.send_later(_post("hello"))

    deliverer.deliver_due()
    clock.now += backoff_s(1)
    deliverer.deliver_due()
    assert [call.status for call in slack.calls("chat.postMessage")] == [503, 200]
    assert [message["text"] for message in slack.messages("C0OPS")] == ["hello"]
    assert outbox.pending() == 0


def test_an_entry_that_fails_for_another_reason_is_counted_and_parked(
    outbox: Outbox, deliverer: Deliverer, clock: SecondsClock, redis_client: redis.Redis
) -> None:
    # A session id no key can be built for: the sender raises ValueError, not a Slack error.
    outbox.send_later(OutboxEntry("update_approval", {"session_id": "bad id", "approval_id": "a" * 24}))

    for _ in range(10):
        deliverer.deliver_due()
        clock.now += 600

    assert outbox.pending() == 0
    [parked] = outbox.dead_letters().values()
    assert "ValueError" in parked["why"]


def test_waiting_for_its_turn_is_not_a_failed_attempt(
    slack: FakeSlack, outbox: Outbox, deliverer: Deliverer, clock: SecondsClock
) -> None:
    first, second = posts_in_order(
        [{"channel": "C0OPS", "text": "part 1"}, {"channel": "C0OPS", "text": "part 2"}], team_id="T0TEST"
    )
    slack.fail_next("chat.postMessage", status=500, retry_after=None)
    for entry in (first, second):
        outbox.send_later(entry)

    deliverer.deliver_due()  # part 1 fails; part 2 waits for it
    clock.now += backoff_s(1)
    deliverer.deliver_due()

    assert [message["text"] for message in slack.messages("C0OPS")] == ["part 1", "part 2"]
    # Only part 1's retry looked for an earlier copy; part 2 had sent nothing before.
    assert len(slack.calls("conversations.history")) == 1
    assert outbox.pending() == 0


def test_a_claim_asks_every_shard_in_one_round_trip(redis_client: redis.Redis, clock: SecondsClock) -> None:
    url = redis_client.connection_pool.connection_kwargs
    counted, trips = counting_client(f"redis://{url['host']}:{url['port']}/{url.get('db', 0)}")
    outbox = Outbox(counted, clock=clock)
    queued = [OutboxEntry("post_message", {"channel": "C0OPS", "text": f"{shard}"}, shard=shard) for shard in range(3)]
    for entry in queued:
        outbox.send_later(entry)
    outbox.claim(lease_s=30)  # the first claim also loads the script into the server
    clock.now += 60  # every lease has run out: all three are due again

    before = trips.count
    claimed = outbox.claim(lease_s=30)

    assert trips.count - before == 1
    assert sorted(entry.shard for entry in claimed) == [0, 1, 2]
