"""Fixtures the outbox and delivery tests share: a loopback Slack, a hand-moved clock, and the outbox on that clock."""

from collections.abc import Iterator

import pytest
import redis

from bot.store.outbox import Outbox
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.seconds_clock import SecondsClock


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def clock() -> SecondsClock:
    return SecondsClock()


@pytest.fixture
def outbox(redis_client: redis.Redis, clock: SecondsClock) -> Outbox:
    return Outbox(redis_client, clock=clock)
