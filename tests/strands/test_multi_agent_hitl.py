"""Strands' vended ``HumanInTheLoop`` inside a Swarm's or a Graph's node, behind the bot: no policy rule, no key.

As for a single agent (``test_vended_hitl``, ``test_vended_trust``): an approval answers what its ``evaluate``
accepts, a refusal tells the node's model who refused and why, and a trust holds for the rest of the session
although Strands gives a node its first state again for each turn and each build. Each job builds a fresh
orchestrator, as another worker would; one test kills a real worker process while the swarm waits.
"""

from typing import Any

import pytest
import redis

from bot.render import action_ids as ids
from tests.bot.support.doomed_worker import kill, wait_until, worker_process
from tests.bot.support.harness import Bot, home_click, is_decided, running_bot, start_thread, thread_session
from tests.bot.support.people import APPROVER
from tests.redis_targets import on_both
from tests.strands.agents import Factory
from tests.strands.lead_rule import blocks_text
from tests.strands.multi_agents import builds, completions, graph_hitl_agent, swarm_hitl_agent

pytest_generate_tests = on_both  # every case on one server and on a cluster

HITL = pytest.mark.parametrize("factory", [swarm_hitl_agent, graph_hitl_agent], ids=["swarm", "graph"])
TRUST_LABEL = "Approve and trust delete_files for this session"


def _buttons(message: dict[str, Any]) -> dict[str, str]:
    return {element["action_id"]: element["text"]["text"] for element in message["blocks"][-1]["elements"]}


def _ask_again(bot: Bot, thread_ts: str, paths: str) -> None:
    assert bot.mention(f"delete {paths}", thread_ts=thread_ts).status == 200
    bot.drain()


@HITL
def test_an_approved_call_in_a_node_runs_once(redis_client: redis.Redis, factory: Factory) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        thread_ts = start_thread(bot, "delete /tmp/a")
        [message] = bot.approval_messages()
        assert "Approval needed: delete_files" in blocks_text(message)
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.request.interrupt_name == "strands:human-in-the-loop"

        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
        bot.drain()

        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/a", bot.thread_texts(thread_ts)
        assert completions(redis_client, "delete_files") == 1
        assert builds(redis_client) == 2
        assert "CONFIRMATION_FAILED" not in " ".join(bot.thread_texts(thread_ts))


@HITL
def test_a_refusal_in_a_node_tells_its_model_who_refused_and_why(redis_client: redis.Redis, factory: Factory) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        thread_ts = start_thread(bot, "delete /tmp/a")
        approval_id = bot.approval_id()
        bot.click(ids.DENY_ACTION, approval_id, user=APPROVER)
        assert bot.submit_deny(approval_id, user=APPROVER, reason="keep the audit copy").status == 200
        bot.drain()

        told = bot.thread_texts(thread_ts)[-1]  # the cleaner answers with the tool's result
        assert told.startswith("CONFIRMATION_FAILED: ")
        assert "keep the audit copy" in told
        assert APPROVER in told
        assert completions(redis_client, "delete_files") == 0
        assert bot.services.stores.sessions.interrupted_sessions() == []


@HITL
def test_a_trust_in_a_node_holds_for_the_session_until_revoked(redis_client: redis.Redis, factory: Factory) -> None:
    with running_bot(redis_client, agent_factory=factory) as bot:
        thread_ts = start_thread(bot, "delete /tmp/a")
        assert _buttons(bot.approval_messages()[0])[ids.TRUST_ACTION] == TRUST_LABEL
        assert bot.click(ids.TRUST_ACTION, bot.approval_id(), user=APPROVER).status == 200
        bot.drain()
        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/a", bot.thread_texts(thread_ts)
        session_id = thread_session(thread_ts)
        assert bot.services.stores.trusts.tools(session_id) == {"delete_files"}

        # A new run, by a freshly built orchestrator whose node starts from its first state: not asked again.
        _ask_again(bot, thread_ts, "/tmp/b")
        assert len(bot.approval_messages()) == 1
        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/b"

        [entry] = [
            block
            for block in bot.open_home(APPROVER)["blocks"]
            if block.get("accessory", {}).get("action_id") == ids.REVOKE_TRUST_ACTION
        ]
        revoke = home_click(ids.REVOKE_TRUST_ACTION, entry["accessory"]["value"], user=APPROVER)
        assert bot.poster.post_action(revoke).status == 200
        bot.drain()

        _ask_again(bot, thread_ts, "/tmp/c")
        assert len(bot.approval_messages()) == 2  # asked again
        assert not is_decided(bot.approval_messages()[-1])
        assert completions(redis_client, "delete_files") == 2


def test_a_worker_killed_while_the_swarm_waits_leaves_it_to_another_that_finishes_it(
    redis_client: redis.Redis, redis_url: str
) -> None:
    with running_bot(redis_client, agent_factory=swarm_hitl_agent) as bot:
        assert bot.mention("delete /tmp/a").status == 200
        factory = "tests.strands.multi_agents:swarm_hitl_agent"
        with worker_process(bot, redis_url, capture_stderr=True, AGENT_FACTORY=factory) as doomed:
            wait_until(lambda: bot.services.stores.sessions.interrupted_sessions() != [], "the swarm waits")
            # The agent's state is saved before the round's post is queued, the job is acknowledged after it, and the
            # thread's lane is left after the post: the swarm waits, and nothing of the worker's is held, once all
            # three are done (a lane held by a dead worker would hold the thread's next message for its lease).
            wait_until(lambda: bot.approval_messages() != [], "the approval was posted")
            wait_until(lambda: bot.services.stores.jobs.pending_count() == 0, "the worker finished its job")
            wait_until(lambda: not list(redis_client.scan_iter(match="signoff:outbox:lane:*")), "the lane was left")
            assert doomed.poll() is None, "the worker exited before it was killed"
            kill(doomed)
        [message] = bot.approval_messages()
        thread_ts = str(message["thread_ts"])
        assert builds(redis_client) == 1  # the dead worker's

        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
        bot.drain()

        assert bot.thread_texts(thread_ts)[-1] == "deleted /tmp/a", bot.thread_texts(thread_ts)
        assert completions(redis_client, "delete_files") == 1
        assert builds(redis_client) == 2  # rebuilt from Redis by this worker
        assert bot.services.stores.sessions.interrupted_sessions() == []
