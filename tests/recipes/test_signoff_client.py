"""The recipes' client (``recipes/signoff_client.py``) against a web process that refuses its first wait (429)."""

import pytest
import redis

from recipes.signoff_client import ask_and_wait
from tests.bot.support.api_client import DEPLOY
from tests.bot.support.busy_api import approving_after_a_refusal, busy_bot
from tests.bot.support.people import APPROVER


def test_a_wait_refused_with_429_is_asked_again_and_gets_the_decision(
    redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    with busy_bot(redis_client) as bot:
        issued = bot.services.stores.api_keys.create("recipe-agent")
        assert issued is not None
        with approving_after_a_refusal(bot, caplog, "recipe-agent"):
            decided = ask_and_wait(bot.url, issued.key, {**DEPLOY, "idempotency_key": "recipe-1"}, timeout_s=30)
    assert (decided["status"], decided["decision"]["decided_by"]) == ("approved", APPROVER)
