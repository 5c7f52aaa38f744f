"""Interrupts raised the ways the Strands docs show (no ``SignoffGate``), behind the real bot.

Invariant 2 (one round): a batch hook's interrupt id is the same for every batch; a second batch
in the same thread must be a new round, posted and decided by a human, never answered by the
first round's decision.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.render import action_ids as ids
from tests.bot.support.crashes import crash_once, redeliver
from tests.bot.support.harness import Bot, is_decided, running_bot, thread_session
from tests.bot.support.people import APPROVER
from tests.strands.agents import Factory, on_both_runtimes
from tests.strands.lead_rule import (
    LEAD,
    deleted_once_the_lead_approves,
    the_approval_asked_for,
)
from tests.strands.native import DENIED, batch_agent, completions, hook_agent, own_batch_agent, own_hook_agent

BATCH = on_both_runtimes(own_batch_agent, batch_agent)


def _session(thread_ts: str) -> str:
    return thread_session(thread_ts)


def _approve_last(bot: Bot) -> None:
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER).status == 200
    bot.drain()


@BATCH
def test_a_second_batch_in_the_thread_is_a_new_round_decided_by_a_human(
    redis_client: redis.Redis, factory: Factory
) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        [first] = bot.approval_messages()
        thread_ts = str(first["thread_ts"])
        _approve_last(bot)
        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/a"
        assert completions(redis_client, "delete_files") == 1

        bot.mention("delete /tmp/b", thread_ts=thread_ts)
        bot.drain()

        messages = bot.approval_messages()
        assert len(messages) == 2, "the second batch must get its own approval message"
        assert bot.approval_id(0) != bot.approval_id(1)
        assert is_decided(messages[0])
        assert not is_decided(messages[1])
        assert completions(redis_client, "delete_files") == 1  # nobody decided the second batch yet

        # Neither a message in the thread nor a click on the first round's message answers the second.
        bot.mention("status?", thread_ts=thread_ts)
        bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER)
        bot.drain()
        assert completions(redis_client, "delete_files") == 1
        assert len(bot.approval_messages()) == 2
        assert not is_decided(bot.approval_messages()[1])
        assert bot.services.stores.sessions.interrupted_sessions() == [_session(thread_ts)]

        _approve_last(bot)
        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/b"
        assert completions(redis_client, "delete_files") == 2


@BATCH
def test_a_denied_second_batch_never_runs(redis_client: redis.Redis, factory: Factory) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        bot.mention("delete /tmp/a")
        bot.drain()
        thread_ts = str(bot.approval_messages()[0]["thread_ts"])
        _approve_last(bot)

        bot.mention("delete /tmp/b", thread_ts=thread_ts)
        bot.drain()
        approval_id = bot.approval_id(-1)
        assert bot.click(ids.DENY_ACTION, approval_id, user=APPROVER).status == 200
        assert bot.submit_deny(approval_id, user=APPROVER, reason="keep b").status == 200
        bot.drain()

        assert bot.thread_texts(thread_ts)[-1] == DENIED
        assert completions(redis_client, "delete_files") == 1


YES_NO = "rules:\n  - name: deletions\n    match: {tools: [delete_files]}\n    response: yes_no\n"
REUSING = pytest.mark.parametrize(
    ("factory", "policy"),
    [(own_batch_agent, None), (batch_agent, None), (own_hook_agent, YES_NO), (hook_agent, YES_NO)],
    ids=["signoff-batch", "strands-batch", "signoff-hook", "strands-hook"],
)


@REUSING
def test_a_resume_that_died_before_posting_a_round_with_the_same_ids_posts_it(
    redis_client: redis.Redis, tmp_path: Path, factory: Factory, policy: str | None
) -> None:
    policy_path = None
    if policy is not None:
        policy_path = tmp_path / "policy.yml"
        policy_path.write_text(policy)
    with running_bot(redis_client, agent_factory=factory, policy_path=policy_path) as bot:
        bot.mention("purge /tmp/a /tmp/b")
        bot.drain()
        thread_ts = str(bot.approval_messages()[0]["thread_ts"])
        first = bot.services.stores.approvals.find(bot.approval_id())
        bot.worker.retries.first_s = 60  # the crashed step comes back by redelivery, never by the clock mid-drain
        crash_once(bot.services.publisher, "publish")
        _approve_last(bot)  # /tmp/a is deleted, then the call for /tmp/b stops: the same interrupt id
        assert completions(redis_client, "delete_files") == 1
        assert len(bot.approval_messages()) == 1

        redeliver(bot)  # the resume job again: it must post the new round, not answer it with the old decision

        assert completions(redis_client, "delete_files") == 1
        assert len(bot.approval_messages()) == 2
        assert not is_decided(bot.approval_messages()[1])
        second = bot.services.stores.approvals.find(bot.approval_id(1))
        assert first is not None
        assert second is not None
        assert second.request.interrupt_id == first.request.interrupt_id
        assert second.request.tool_input == {"paths": ["/tmp/b"]}
        _approve_last(bot)
        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/a | deleted /tmp/b"
        assert completions(redis_client, "delete_files") == 2


@BATCH
def test_a_start_that_died_before_posting_a_second_batch_posts_it_on_the_next_mention(
    redis_client: redis.Redis, factory: Factory
) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        bot.worker.claim_idle_ms = 60_000
        bot.mention("delete /tmp/a")
        bot.drain()
        thread_ts = str(bot.approval_messages()[0]["thread_ts"])
        _approve_last(bot)
        bot.worker.retries.first_s = 60  # the crashed step comes back by redelivery, never by the clock mid-drain
        crash_once(bot.services.publisher, "publish")
        bot.mention("delete /tmp/b", thread_ts=thread_ts)
        bot.drain()
        assert len(bot.approval_messages()) == 1

        bot.mention("anything?", thread_ts=thread_ts)  # not a redelivery: a new request while it waits
        bot.drain()

        assert completions(redis_client, "delete_files") == 1
        assert len(bot.approval_messages()) == 2
        _approve_last(bot)
        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/b"
        assert completions(redis_client, "delete_files") == 2


# --- invariant 3 (authorized): the tool's rules apply to native interrupts -------------------


@pytest.fixture
def bot(redis_client: redis.Redis, tmp_path: Path, factory: Factory) -> Iterator[Bot]:
    """The bot running the test's agent (``factory``) under the lead's deletions rule alone."""
    policy = tmp_path / "policy.yml"
    policy.write_text(
        f"rules:\n  - name: deletions\n    match: {{tools: [delete_files]}}\n    approvers: {{users: [{LEAD}]}}\n"
    )
    with running_bot(redis_client, agent_factory=factory, policy_path=policy) as running:
        yield running


@BATCH
def test_a_batch_hook_guarding_one_call_is_judged_by_that_tools_rule(bot: Bot, redis_client: redis.Redis) -> None:
    deleted_once_the_lead_approves(bot, redis_client)


@BATCH
def test_a_batch_holding_a_gated_tool_is_judged_by_its_rule_and_lists_every_call(
    bot: Bot, redis_client: redis.Redis
) -> None:
    text = the_approval_asked_for(bot, "clean /tmp/a")
    assert "delete_files, inspect_files" in text
    assert "deletions" in text
    request = bot.services.stores.approvals.find(bot.approval_id())
    assert request is not None
    assert [call.tool for call in request.request.calls] == ["delete_files", "inspect_files"]

    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()
    assert not is_decided(bot.approval_messages()[0])
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=LEAD)
    bot.drain()
    assert completions(redis_client, "delete_files") == 1
    assert completions(redis_client, "inspect_files") == 1
