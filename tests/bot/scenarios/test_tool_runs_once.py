"""Invariant 4 (Once) through the whole bot: an approved call runs at most once.

Redis stops right after an approved tool returned: the worker saves the result once Redis is back
(1.5 s later), publishes the answer and acknowledges the job; nothing is left to run again. A call
whose worker died after it started is asked about again, and expiry never says yes to that.
"""

from pathlib import Path

import pytest
import redis

from agent import AfterToolCallEvent, Agent
from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.services import connect_redis
from state import SessionStore
from tests.agent.support import WorkerDied
from tests.bot.support.agents import completions, counting_agent
from tests.bot.support.harness import is_decided, running_bot, take_over
from tests.bot.support.people import APPROVER
from tests.outage import StopRedisAfterTool, TimedOutage


def test_redis_stopped_after_an_approved_tool_returned_the_tool_ran_once_and_the_job_finished(
    outage: TimedOutage,
) -> None:
    # The bot's client retries in place only briefly (0.3 s): the 1.5 s outage reaches the result's save.
    client = connect_redis(outage.server.url, retry_s=0.3)
    counter = redis.Redis.from_url(outage.server.url)

    def factory(*, session_id: str, store: SessionStore) -> Agent:
        agent = counting_agent(session_id=session_id, store=store, client=counter)
        agent.hooks.add_hook(StopRedisAfterTool(outage, AfterToolCallEvent, tool="deploy"))
        return agent

    with running_bot(client, agent_factory=factory) as bot:
        bot.mention("deploy api")
        bot.drain()
        thread_ts = bot.approval_messages()[0]["thread_ts"]
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)

        bot.drain()

        assert outage.restarted.is_set()
        assert bot.thread_texts(thread_ts)[-1] == "deployed and told"
        assert (completions(counter, "deploy"), completions(counter, "notify")) == (1, 1)
        assert bot.services.stores.jobs.pending_count() == 0
        # Another worker, later: nothing left to run again.
        bot.services.worker(claim_idle_ms=0).run_jobs_once(block_ms=1)
        bot.drain()
        assert completions(counter, "deploy") == 1
        assert bot.thread_texts(thread_ts)[-1] == "deployed and told"


def test_a_rerun_question_never_expires_into_an_approval(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        "rules:\n  - {name: deploys, match: {tools: [deploy]}, low_risk: true, expiry: {after: 1h, outcome: approve}}\n"
    )
    runs = {"n": 0}

    def factory(*, session_id: str, store: SessionStore) -> Agent:
        agent = counting_agent(session_id=session_id, store=store, client=redis_client)

        def deploy(service: str) -> str:
            runs["n"] += 1
            if runs["n"] == 1:
                raise WorkerDied  # it took effect; the worker died before the result was recorded
            return f"deployed {service}"

        agent.tools["deploy"].func = deploy
        return agent

    clock = ManualClock()
    with running_bot(redis_client, agent_factory=factory, policy_path=policy, clock=clock) as bot:
        bot.mention("deploy api")
        bot.drain()
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        with pytest.raises(WorkerDied):
            bot.drain()
        take_over(bot.services.worker(claim_idle_ms=0))
        bot.drain()
        assert len(bot.approval_messages()) == 2

        clock.advance(61 * 60)
        bot.drain()

        assert runs["n"] == 1
        assert is_decided(bot.approval_messages()[1])
        question = bot.services.stores.approvals.find(bot.approval_id(1))
        assert question is not None
        assert question.decision is not None
        assert question.decision.decision == "expired"
