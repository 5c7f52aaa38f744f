"""Fixtures for the bot's scenario tests; every scenario that uses ``redis_client`` runs on one server and
on a 3-master Redis Cluster (ids ``single`` and ``cluster``)."""

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.redis_targets import on_both

pytest_generate_tests = on_both

SCENARIO_POLICY = Path(__file__).parents[1] / "support" / "policies" / "scenario.yml"


@pytest.fixture
def bot(redis_client: redis.Redis) -> Iterator[Bot]:
    """The bot with the demonstration agent and the built-in policy."""
    with running_bot(redis_client, agent_factory=demo_factory) as running:
        yield running


@pytest.fixture
def policed_bot(redis_client: redis.Redis) -> Iterator[Bot]:
    """The demonstration agent under the scenario policy (named approvers, on-call group S0ONCALL, a reason for
    rollbacks)."""
    with running_bot(
        redis_client, agent_factory=demo_factory, policy_path=SCENARIO_POLICY, usergroups={"S0ONCALL": ["U0ONCALL"]}
    ) as running:
        yield running
