"""Fixtures for the bot's scenario tests."""

from collections.abc import Iterator

import pytest
import redis

from tests.bot.support.harness import Bot, demo_factory, running_bot


@pytest.fixture
def bot(redis_client: redis.Redis) -> Iterator[Bot]:
    """The bot with the demonstration agent and the built-in policy."""
    with running_bot(redis_client, agent_factory=demo_factory) as running:
        yield running
