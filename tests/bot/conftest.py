"""Fixtures the bot's tests share: ``redis_client`` as the bot builds it, a loopback Slack, and the outbox on the
hand-moved ``clock``."""

from collections.abc import Iterator

import pytest
import redis
from redis.cluster import RedisCluster

from bot.store.cluster_client import BotRedisCluster
from bot.store.queues.outbox import Outbox
from tests.bot.support.fake_slack import FakeSlack
from tests.seconds_clock import SecondsClock


@pytest.fixture
def cluster_client_class() -> type[RedisCluster]:
    """``redis_client`` on a cluster is the bot's own cluster client."""
    return BotRedisCluster


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def outbox(redis_client: redis.Redis, clock: SecondsClock) -> Outbox:
    return Outbox(redis_client, clock=clock)
