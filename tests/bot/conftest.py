"""Fixtures the bot's tests share: ``redis_client`` as the bot builds it, a loopback Slack, and the outbox on the
hand-moved ``clock``."""

from collections.abc import Iterator
from typing import cast

import pytest
import redis

from bot.store.cluster_client import BotRedisCluster
from bot.store.queues.outbox import Outbox
from tests.bot.support.fake_slack import FakeSlack
from tests.seconds_clock import SecondsClock


@pytest.fixture
def redis_client(redis_url: str, redis_target: str) -> Iterator[redis.Redis]:
    """The shared fixture's client, but the bot's own cluster client (``BotRedisCluster``) on a cluster."""
    if redis_target == "cluster":
        client = cast(redis.Redis, BotRedisCluster.from_url(redis_url))
    else:
        client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def outbox(redis_client: redis.Redis, clock: SecondsClock) -> Outbox:
    return Outbox(redis_client, clock=clock)
