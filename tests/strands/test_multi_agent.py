"""Strands Swarms and Graphs behind the bot: their interrupts become approvals, and they resume where they stopped.

The orchestrators are those of ``tests.strands.multi_agents`` (real Strands, scripted models). The bot builds one
per job, so each resume is done by a freshly built orchestrator restored from Redis, as another worker would.
"""

from contextlib import AbstractContextManager
from pathlib import Path

import pytest
import redis

from bot.render import action_ids as ids
from tests.bot.support.harness import Bot, is_decided, running_bot, start_thread, thread_session
from tests.bot.support.people import APPROVER
from tests.bot.support.policy_files import write
from tests.strands.agents import Factory
from tests.strands.lead_rule import blocks_text
from tests.strands.multi_agents import (
    DENIED,
    NODE_DENIED,
    NOT_DELETED,
    NOT_PERSISTED,
    builds,
    completions,
    graph_node_gate_agent,
    graph_tool_agent,
    swarm_hook_agent,
    swarm_node_gate_agent,
    swarm_tool_agent,
    unpersisted_swarm_agent,
)

# The docs' hooks expect "y" or "n".
YES_NO = """\
rules:
  - name: deletions
    match: {tools: [delete_files]}
    response: yes_no
  - name: cleanups
    match: {interrupts: [cleanup-approval]}
    response: yes_no
"""

TOOL_ASKS = pytest.mark.parametrize("factory", [swarm_tool_agent, graph_tool_agent], ids=["swarm", "graph"])
GATED_CALL = pytest.mark.parametrize(
    "factory", [swarm_tool_agent, swarm_hook_agent, graph_tool_agent], ids=["swarm-tool", "swarm-hook", "graph-tool"]
)
NODE_GATE = pytest.mark.parametrize("factory", [swarm_node_gate_agent, graph_node_gate_agent], ids=["swarm", "graph"])


def _bot(redis_client: redis.Redis, tmp_path: Path, factory: Factory) -> AbstractContextManager[Bot]:
    return running_bot(redis_client, agent_factory=factory, policy_path=write(tmp_path, YES_NO))


def _the_call_asked(bot: Bot, thread_ts: str) -> None:
    """One approval message in the thread names ``delete_files`` and its path; nothing was deleted yet."""
    [message] = bot.approval_messages()
    assert message["thread_ts"] == thread_ts
    assert "Approval needed: delete_files" in blocks_text(message)
    assert "/tmp/a" in blocks_text(message)
    approval = bot.services.stores.approvals.find(bot.approval_id())
    assert approval is not None
    assert (approval.request.tool, approval.request.tool_input) == ("delete_files", {"paths": ["/tmp/a"]})


@GATED_CALL
def test_a_gated_call_is_approved_in_the_thread_and_the_orchestrator_finishes_where_it_stopped(
    redis_client: redis.Redis, tmp_path: Path, factory: Factory
) -> None:
    with _bot(redis_client, tmp_path, factory) as bot:
        thread_ts = start_thread(bot, "delete /tmp/a")
        _the_call_asked(bot, thread_ts)
        session_id = thread_session(thread_ts)
        assert bot.services.stores.sessions.interrupted_sessions() == [session_id]
        assert completions(redis_client, "delete_files") == 0

        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
        bot.drain()

        assert is_decided(bot.approval_messages()[0])
        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/a"  # the last node's answer
        assert completions(redis_client, "delete_files") == 1
        assert builds(redis_client) == 2  # the resume was a second orchestrator, rebuilt from Redis
        assert bot.services.stores.sessions.interrupted_sessions() == []


@GATED_CALL
def test_a_denied_call_never_runs(redis_client: redis.Redis, tmp_path: Path, factory: Factory) -> None:
    with _bot(redis_client, tmp_path, factory) as bot:
        thread_ts = start_thread(bot, "delete /tmp/a")
        approval_id = bot.approval_id()
        assert bot.click(ids.DENY_ACTION, approval_id, user=APPROVER).status == 200
        assert bot.submit_deny(approval_id, user=APPROVER, reason="keep it").status == 200
        bot.drain()

        assert is_decided(bot.approval_messages()[0])
        assert completions(redis_client, "delete_files") == 0
        # The tool tells the model itself; the docs' hook cancels the call with its own words.
        assert bot.thread_texts(thread_ts)[-1] == (DENIED if factory is swarm_hook_agent else NOT_DELETED)
        assert bot.services.stores.sessions.interrupted_sessions() == []


@TOOL_ASKS
def test_a_second_round_in_the_same_thread_is_a_new_run(
    redis_client: redis.Redis, tmp_path: Path, factory: Factory
) -> None:
    with _bot(redis_client, tmp_path, factory) as bot:
        thread_ts = start_thread(bot, "delete /tmp/a")
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()

        assert bot.mention("delete /tmp/b", thread_ts=thread_ts).status == 200
        bot.drain()
        asked = bot.approval_messages()[-1]
        assert len(bot.approval_messages()) == 2
        assert asked["thread_ts"] == thread_ts
        assert "/tmp/b" in blocks_text(asked)
        assert not is_decided(asked)

        bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
        bot.drain()

        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/b"
        assert completions(redis_client, "delete_files") == 2
        first, second = (bot.services.stores.approvals.find(bot.approval_id(index)) for index in (0, 1))
        assert first is not None
        assert second is not None
        assert first.request.interrupt_id == second.request.interrupt_id  # Strands gives the same id again...
        assert first.request.approval_id != second.request.approval_id  # ...and each round has its own approval


@NODE_GATE
def test_a_node_hook_asks_before_the_node_runs_and_guards_no_call(
    redis_client: redis.Redis, tmp_path: Path, factory: Factory
) -> None:
    with _bot(redis_client, tmp_path, factory) as bot:
        thread_ts = start_thread(bot, "delete /tmp/a")
        [message] = bot.approval_messages()
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.request.interrupt_name == "cleanup-approval"
        assert approval.request.tool is None  # the node has not asked for any call yet
        assert approval.request.policy.name == "cleanups"
        assert "cleanup-approval" in blocks_text(message)

        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()

        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/a"
        assert completions(redis_client, "delete_files") == 1


@NODE_GATE
def test_a_node_refused_by_its_hook_never_runs(redis_client: redis.Redis, tmp_path: Path, factory: Factory) -> None:
    with _bot(redis_client, tmp_path, factory) as bot:
        thread_ts = start_thread(bot, "delete /tmp/a")
        approval_id = bot.approval_id()
        bot.click(ids.DENY_ACTION, approval_id, user=APPROVER)
        bot.submit_deny(approval_id, user=APPROVER, reason="not now")
        bot.drain()

        assert completions(redis_client, "delete_files") == 0
        assert bot.thread_texts(thread_ts)[-1] == f"cleaner: {NODE_DENIED}"
        assert bot.services.stores.sessions.interrupted_sessions() == []

        # The refused run is over: the next request in the thread asks again, from the start.
        bot.mention("delete /tmp/b", thread_ts=thread_ts)
        bot.drain()
        assert len(bot.approval_messages()) == 2
        bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
        bot.drain()
        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/b"
        assert completions(redis_client, "delete_files") == 1


def test_a_swarm_no_worker_could_resume_is_refused_in_the_thread(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=unpersisted_swarm_agent) as bot:
        assert bot.mention("delete /tmp/a").status == 200
        bot.drain()

        [reply] = bot.texts_posted()
        assert "not retried" in reply
        assert NOT_PERSISTED in reply  # what to change
        assert bot.approval_messages() == []
        assert completions(redis_client, "delete_files") == 0
