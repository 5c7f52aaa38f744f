"""A factory or agent that cannot work as written fails once, with one message naming the problem.

A type error or a missing method fails the same way on every try: retrying it five times only delays
the message and hides it among the retries. A passing fault (the model provider down) is still retried.
"""

from typing import Any

import pytest
import redis

from agent import Agent
from agent.hooks import BeforeInvocationEvent
from bot.render import action_ids as ids
from tests.bot.support.harness import demo_factory, running_bot
from tests.bot.support.people import APPROVER

FIXED = "test:factory-fixed"


class _NotAnAgent:
    """What a factory returns when it was written for another framework's object."""


def _returns_a_stranger(*, session_id: str, store: Any) -> Any:
    if store.client.exists(FIXED):
        return demo_factory(session_id=session_id, store=store)
    return _NotAnAgent()


def _misnamed_keyword(*, session_id: str, store: Any) -> Agent:
    return demo_factory(session_id=session_id, store=store, sesion=session_id)  # type: ignore[call-arg]


class _BrokenHook:
    def register_hooks(self, registry: Any) -> None:
        registry.add_callback(BeforeInvocationEvent, lambda event: event.missing_method())


def _hook_with_a_typo(*, session_id: str, store: Any) -> Agent:
    agent = demo_factory(session_id=session_id, store=store)
    agent.hooks.add_hook(_BrokenHook())
    return agent


@pytest.mark.parametrize(
    ("factory", "named"),
    [
        (_returns_a_stranger, "TypeError: agent_type=&lt;_NotAnAgent&gt;"),
        (_misnamed_keyword, "TypeError"),
        (_hook_with_a_typo, "AttributeError"),
    ],
    ids=["not-an-agent", "factory-type-error", "agent-attribute-error"],
)
def test_a_fault_in_the_agents_code_fails_once_and_says_what(
    redis_client: redis.Redis, factory: Any, named: str
) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        bot.worker.claim_idle_ms = 0  # a retry would be claimed at once: prove there is none
        bot.mention("restart checkout")
        bot.drain()

        posted = bot.texts_posted()
        assert len(posted) == 1, posted  # one message, no "retrying" notices before it
        assert posted[0].startswith("❌ The agent could not run, so it was stopped, not retried: ")
        assert named in posted[0]
        assert "AGENT_FACTORY" in posted[0]
        assert bot.services.stores.jobs.pending_count() == 0
        events = [entry.event for entry in bot.services.stores.audit.entries() if entry.event.startswith("job_")]
        assert events == ["job_failed_agent_setup"]


def test_once_the_factory_is_fixed_a_new_mention_works(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=_returns_a_stranger) as bot:
        bot.mention("restart checkout")
        bot.drain()
        [told] = bot.slack.calls("chat.postMessage")
        thread_ts = str(told.args["thread_ts"])
        redis_client.set(FIXED, "1")

        bot.mention("restart checkout", thread_ts=thread_ts)
        bot.drain()
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()

        assert "restarted" in bot.texts_posted()[-1]
