"""Fixtures the outbox and delivery tests share: a loopback Slack, and the outbox on the hand-moved ``clock``."""

from collections.abc import Iterator

import pytest
import redis

from bot.store.queues.outbox import Outbox
from tests.bot.support.fake_slack import FakeSlack
from tests.seconds_clock import SecondsClock


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def outbox(redis_client: redis.Redis, clock: SecondsClock) -> Outbox:
    return Outbox(redis_client, clock=clock)
