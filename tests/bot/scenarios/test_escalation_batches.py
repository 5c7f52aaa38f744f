"""The escalation tick in batches: a few round trips whatever is due, each step written only while its claim holds."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from bench.round_trips import counting_client
from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.services import Services
from bot.store import keys
from bot.store.queues.schedule import Step
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER
from tests.bot.support.policy_files import write

REMINDERS = """\
rules:
  - name: service-changes
    match: {tools: [restart_service]}
    reminders: {every: 15m}
"""
LEASE_S = 60


@contextmanager
def _bot(redis_client: redis.Redis, tmp_path: Path) -> Iterator[tuple[Bot, ManualClock]]:
    policy = write(tmp_path, REMINDERS)
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as bot:
        yield bot, clock


def _requests(bot: Bot, count: int) -> list[str]:
    for index in range(count):
        bot.mention(f"restart checkout {index}")
    bot.drain()
    assert len(bot.approval_messages()) == count
    return [bot.approval_id(index) for index in range(count)]


def _due(bot: Bot, clock: ManualClock, count: int) -> list[str]:
    """``count`` requests, and 15 minutes later their first reminders due; their approval ids."""
    approval_ids = _requests(bot, count)
    clock.advance(15 * 60)
    return approval_ids


def _take_and_plan(bot: Bot) -> list[Step]:
    """What a tick does before it writes: claim what is due, read the approvals, plan every step."""
    services = bot.services
    steps = services.stores.schedule.take(limit=100)
    approvals = services.stores.approvals.get_many_readable(
        [(step.due.session_id, step.due.approval_id) for step in steps]
    )
    for step, approval in zip(steps, approvals, strict=True):
        services.escalator.plan(step, approval)
    return steps


def _reminders(bot: Bot) -> list[str]:
    return [text for text in bot.texts_posted() if "Still waiting" in text]


def _audited_reminders(bot: Bot) -> list[str]:
    return [entry.details["approval_id"] for entry in bot.services.stores.audit.entries() if entry.event == "reminder"]


@pytest.mark.single_redis  # counts round trips on one connection; on a cluster a tick costs one per master
def test_a_tick_costs_three_round_trips_however_many_reminders_are_due(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    with _bot(redis_client, tmp_path) as (bot, clock):
        _requests(bot, 12)
        url = redis_client.connection_pool.connection_kwargs
        counted, trips = counting_client(f"redis://{url['host']}:{url['port']}/{url.get('db', 0)}")
        escalator = Services(bot.services.settings, redis_client=counted, agent_factory=demo_factory, clock=clock)
        clock.advance(15 * 60)
        assert escalator.escalator.tick() == 12  # the first tick also loads the scripts into the server

        clock.advance(15 * 60)
        before = trips.count
        assert escalator.escalator.tick() == 12
        assert trips.count - before == 3  # claim, read the approvals, write every step

        bot.drain()
        assert len(_reminders(bot)) == 24
        assert sorted(_audited_reminders(bot)) == sorted([bot.approval_id(index) for index in range(12)] * 2)
        assert bot.services.stores.schedule.pending() == 24  # each reminder planned again, each expiry (the default)


def test_a_worker_killed_before_writing_its_steps_loses_none_and_fires_none_twice(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    with _bot(redis_client, tmp_path) as (bot, clock):
        approval_ids = _due(bot, clock, 5)
        services = bot.services

        # A worker claims and plans every due step, then dies before writing them.
        doomed = _take_and_plan(bot)
        assert len(doomed) == 5

        bot.drain()
        assert _reminders(bot) == []  # still leased to the dead worker
        clock.advance(LEASE_S)
        bot.drain()
        assert len(_reminders(bot)) == 5  # the lease ran out: another worker fired them

        # The "dead" worker was only stalled; its late writes are refused, nothing shows twice.
        assert services.stores.schedule.apply(doomed) == [False] * 5
        bot.drain()
        assert len(_reminders(bot)) == 5
        assert sorted(_audited_reminders(bot)) == sorted(approval_ids)
        assert services.stores.schedule.pending() == 10  # each reminder planned again, each expiry


def test_a_decision_between_the_read_and_the_write_drops_only_that_step(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    with _bot(redis_client, tmp_path) as (bot, clock):
        approval_ids = _due(bot, clock, 3)
        steps = _take_and_plan(bot)

        decided = steps[1].due.approval_id
        bot.click(ids.APPROVE_ACTION, decided, user=APPROVER)
        assert bot.services.stores.schedule.apply(steps) == [True, False, True]
        bot.drain()

        assert len(_reminders(bot)) == 2
        assert sorted(_audited_reminders(bot)) == sorted(set(approval_ids) - {decided})
        assert bot.services.stores.schedule.pending() == 4  # the decided request has nothing scheduled


def test_an_unreadable_request_is_quarantined_and_the_others_fire(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path) as (bot, clock):
        approval_ids = _requests(bot, 3)
        broken = approval_ids[0]
        session_id = bot.services.stores.approvals.session_of(broken)
        assert session_id is not None
        bot.corrupt(broken, session_id)
        clock.advance(15 * 60)

        assert bot.services.escalator.tick() == 3
        bot.drain()
        assert sorted(_audited_reminders(bot)) == sorted(approval_ids[1:])
        assert broken in bot.services.stores.approvals.quarantined()
        assert not redis_client.hexists(
            keys.schedule_steps(keys.shard_of(session_id)), f"{broken}:remind"
        )  # dropped, not retried forever
