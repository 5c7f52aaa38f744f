"""Fixtures for the recipes: the whole bot (loopback Slack, real Redis) and an API key for the agent."""

from collections.abc import Iterator

import pytest
import redis

from tests.bot.support.api_conformance import assert_documented_requests_only
from tests.bot.support.harness import Bot, demo_factory, running_bot


@pytest.fixture
def bot(redis_client: redis.Redis) -> Iterator[Bot]:
    """The bot with the built-in policy (anyone in the channel but the requester decides)."""
    with running_bot(redis_client, agent_factory=demo_factory) as running:
        yield running
        assert_documented_requests_only(running.api)


@pytest.fixture
def api_key(bot: Bot) -> str:
    """A key the recipe's agent holds."""
    issued = bot.services.stores.api_keys.create("recipe-agent")
    assert issued is not None
    return issued.key
