"""The same bot scenarios, over signed HTTP against a loopback Slack, for both runtimes.

Each scenario runs once with Signoff's own agent and once with a real ``strands.Agent`` (scripted
model, Strands' concurrent tool executor, Signoff's Redis session repository): the bot must not
be able to tell them apart.
"""

import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from agent.approval import refusal_text
from bot.render import action_ids as ids
from bot.store.queues.jobs import ResumeJob
from state.interrupt import _InterruptState
from tests.bot.support.harness import Bot, is_decided, running_bot, start_thread, thread_session
from tests.bot.support.people import APPROVER
from tests.bot.support.policy_files import write
from tests.bot.support.restarts import approved_after_a_restart
from tests.strands.agents import (
    BATCH,
    OPERATIONS,
    Factory,
    completions,
    signoff_operations_agent,
    strands_operations_agent,
)


@pytest.fixture
def bot(redis_client: redis.Redis, factory: Factory) -> Iterator[Bot]:
    """The bot running the test's agent (``factory``, one runtime or the other)."""
    with running_bot(redis_client, agent_factory=factory) as running:
        yield running


def _session(thread_ts: str) -> str:
    return thread_session(thread_ts)


def _approval_view(message: dict[str, Any]) -> dict[str, Any]:
    """An approval message without what differs between two runs (timestamps, ids)."""
    blocks = json.dumps(message["blocks"])
    return {"text": message["text"], "has_restart": "restart_service" in blocks, "checkout": "checkout" in blocks}


@OPERATIONS
def test_request_approval_approve_the_tool_ran_once_and_the_reply(redis_client: redis.Redis, bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")
    [message] = bot.approval_messages()
    assert "restart_service" in message["text"]
    assert not is_decided(message)
    assert bot.services.stores.sessions.interrupted_sessions() == [_session(thread_ts)]
    assert completions(redis_client, "restart_service") == 0

    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
    bot.drain()

    assert is_decided(bot.approval_messages()[0])
    assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"
    assert completions(redis_client, "restart_service") == 1
    assert bot.services.stores.sessions.interrupted_sessions() == []


@OPERATIONS
def test_deny_the_tool_never_ran_and_people_read_who_denied_it_and_why(redis_client: redis.Redis, bot: Bot) -> None:
    thread_ts = start_thread(bot, "roll back payments")
    approval_id = bot.approval_id()
    assert bot.click(ids.DENY_ACTION, approval_id, user=APPROVER).status == 200
    assert bot.submit_deny(approval_id, user=APPROVER, reason="release freeze until 18:00").status == 200
    bot.drain()

    assert is_decided(bot.approval_messages()[0])
    assert completions(redis_client, "rollback_deploy") == 0
    approval = bot.services.stores.approvals.get(_session(thread_ts), approval_id)
    assert approval is not None
    assert approval.decision is not None
    # The scripted model answers with the tool results it saw: the refusal, word for word. People read the
    # bot's account of it instead: who (a mention) and why, without the instructions meant for the model.
    reply = bot.thread_texts(thread_ts)[-1]
    assert refusal_text(approval.decision) not in reply
    assert f"<@{APPROVER}> denied it: release freeze until 18:00" in reply
    assert "Do not retry" not in reply
    assert APPROVER not in reply.replace(f"<@{APPROVER}>", "")
    [reply_blocks] = [
        call.args["blocks"] for call in bot.slack.calls("chat.postMessage") if call.args.get("text") == reply
    ]
    assert json.dumps(reply_blocks).count(f"<@{APPROVER}>") == 1


@BATCH
def test_two_calls_in_one_turn_one_gated_the_other_kept_and_not_rerun(redis_client: redis.Redis, bot: Bot) -> None:
    thread_ts = start_thread(bot, "ship it")
    [message] = bot.approval_messages()
    assert "deploy" in message["text"]
    assert completions(redis_client, "notify") == 1  # ran before the decision
    assert completions(redis_client, "deploy") == 0

    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()

    assert bot.thread_texts(thread_ts)[-1] == "deployed api | told #ops"
    assert completions(redis_client, "notify") == 1  # kept, not re-run
    assert completions(redis_client, "deploy") == 1


@OPERATIONS
def test_worker_restarted_between_interrupt_and_decision(redis_client: redis.Redis, factory: Factory) -> None:
    with approved_after_a_restart(redis_client, factory) as (restarted, _):
        replies = [call.args["text"] for call in restarted.slack.calls("chat.postMessage")]
        assert replies == ["checkout: 3 replicas restarted"]
        assert completions(redis_client, "restart_service") == 1


@OPERATIONS
def test_a_redelivered_resume_job_changes_nothing(redis_client: redis.Redis, bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")
    session_id = _session(thread_ts)
    [round_version] = [bot.services.stores.approvals.round_approvals(session_id)[0]]
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()

    # The same job, delivered again.
    bot.services.stores.jobs.enqueue(ResumeJob(session_id, round_version))
    bot.drain()

    assert bot.thread_texts(thread_ts).count("checkout: 3 replicas restarted") == 1
    assert completions(redis_client, "restart_service") == 1


def test_both_runtimes_post_the_same_approval_message(redis_client: redis.Redis) -> None:
    views = []
    for factory in (signoff_operations_agent, strands_operations_agent):
        redis_client.flushdb()
        with running_bot(redis_client, agent_factory=factory) as bot:
            start_thread(bot, "restart checkout")
            [message] = bot.approval_messages()
            views.append(_approval_view(message))
            session = bot.services.stores.sessions.load(_session(str(message["thread_ts"])))
            assert session is not None
            [interrupt] = _InterruptState.from_dict(session.interrupt_state).interrupts.values()
            views.append({"id": interrupt.id, "name": interrupt.name, "reason": interrupt.reason})
    assert views[0] == views[2]
    # Each runtime writes the tool's schema its own way (pydantic adds titles): the fields and types agree.
    ours, theirs = (view["reason"].pop("inputSchema") for view in (views[1], views[3]))
    assert ours["required"] == theirs["required"] == ["service"]
    assert ours["properties"]["service"]["type"] == theirs["properties"]["service"]["type"] == "string"
    assert views[1] == views[3]


TIERED = """\
rules:
  - name: no-prod-restarts
    match: {tools: [restart_service], when: 'args.service == "payments"'}
    tier: deny
    message: Payments restarts need a change ticket.
  - name: free-restarts
    match: {tools: [restart_service]}
    tier: allow
"""


@OPERATIONS
def test_a_rule_decides_by_itself_for_either_runtime(
    redis_client: redis.Redis, factory: Factory, tmp_path: Any
) -> None:
    policy = write(tmp_path, TIERED)
    with running_bot(redis_client, agent_factory=factory, policy_path=policy) as bot:
        allowed = start_thread(bot, "restart checkout")
        assert is_decided(bot.approval_messages()[0])
        assert completions(redis_client, "restart_service") == 1  # ran, nobody asked
        assert "checkout" in bot.thread_texts(allowed)[-1]
        refused = _start_next(bot, "restart payments")
        assert completions(redis_client, "restart_service") == 1  # never ran
        assert "Payments restarts need a change ticket" in bot.thread_texts(refused)[-1]


def _start_next(bot: Bot, request: str) -> str:
    assert bot.mention(request).status == 200
    bot.drain()
    return str(bot.approval_messages()[-1]["thread_ts"])


@OPERATIONS
def test_an_edited_call_runs_with_the_edited_input_for_either_runtime(redis_client: redis.Redis, bot: Bot) -> None:
    thread_ts = start_thread(bot, "scale checkout to 5")
    approval_id = bot.approval_id()
    view = bot.open_edit(approval_id, user=APPROVER)
    assert bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"}).status == 200
    bot.drain()

    replies = "\n".join(bot.thread_texts(thread_ts))
    assert "checkout: scaled from 3 to 2 replicas" in replies
    assert "to 5 replicas" not in replies
    assert completions(redis_client, "scale_service") == 1
