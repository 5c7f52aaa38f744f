"""A worker process killed mid-job: another worker claims the job and finishes it; no tool runs twice.

Invariant 4 (Once): a call killed between "started" and "recorded" is asked about again, never re-run silently.
"""

import json
from functools import partial

import pytest
import redis

from bot.render import action_ids as ids
from bot.store import keys
from tests.bot.support.agents import (
    HOLD_DEPLOY_KEY,
    HOLD_KEY,
    STARTED_DEPLOY_KEY,
    STARTED_KEY,
    completions,
    counting_agent,
)
from tests.bot.support.doomed_worker import approve_and_kill_the_worker_in_the_tool, kill_a_worker_once_it_sets
from tests.bot.support.harness import is_decided, running_bot, take_over, thread_session
from tests.bot.support.people import APPROVER


def test_a_killed_worker_leaves_the_job_to_another_and_no_tool_runs_twice(
    redis_client: redis.Redis, redis_url: str
) -> None:
    factory = partial(counting_agent, client=redis_client)
    with running_bot(redis_client, agent_factory=factory) as bot:
        assert bot.mention("deploy api").status == 200
        bot.drain()
        approval_id = bot.approval_id()
        thread_ts = bot.approval_messages()[0]["thread_ts"]
        assert completions(redis_client, "deploy") == 0

        redis_client.set(HOLD_KEY, "1")
        assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
        kill_a_worker_once_it_sets(redis_client, STARTED_KEY, bot, redis_url)  # deploy done, notify running
        assert completions(redis_client, "deploy") == 1
        assert bot.services.stores.jobs.pending_count() == 1  # the job is still pending, owned by the dead worker

        redis_client.delete(HOLD_KEY)
        survivor = bot.services.worker(claim_idle_ms=0)
        take_over(survivor)
        bot.drain()

        assert completions(redis_client, "deploy") == 1
        assert completions(redis_client, "notify") == 1
        assert bot.thread_texts(thread_ts)[-1] == "deployed and told"
        assert bot.services.stores.jobs.pending_count() == 0


@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_a_worker_killed_inside_an_approved_tool_makes_the_next_one_ask_before_running_it_again(
    redis_client: redis.Redis, redis_url: str, answer: str
) -> None:
    factory = partial(counting_agent, client=redis_client)
    with running_bot(redis_client, agent_factory=factory) as bot:
        thread_ts = approve_and_kill_the_worker_in_the_tool(
            bot, redis_client, redis_url, "deploy api", hold_key=HOLD_DEPLOY_KEY, started_key=STARTED_DEPLOY_KEY
        )

        take_over(bot.services.worker(claim_idle_ms=0))
        bot.drain()

        assert redis_client.get(STARTED_DEPLOY_KEY) == b"1"  # not run again by the survivor
        first, second = bot.approval_messages()
        assert is_decided(first)
        assert not is_decided(second)
        assert "may already have run" in json.dumps(second["blocks"])
        assert "deploy" in second["text"]
        if answer == "approve":
            bot.click(ids.APPROVE_ACTION, bot.approval_id(1), user=APPROVER)
        else:
            bot.submit_deny(bot.approval_id(1), user=APPROVER, reason="it went out already")
        bot.drain()

        assert bot.thread_texts(thread_ts)[-1] == "deployed and told"
        assert completions(redis_client, "notify") == 1
        session = bot.services.stores.sessions.load(thread_session(thread_ts))
        assert session is not None
        [deploy_result] = [
            block["toolResult"]
            for message in session.messages
            for block in message["content"]
            if "toolResult" in block and block["toolResult"]["toolUseId"] == "t1"
        ]
        if answer == "approve":
            assert redis_client.get(STARTED_DEPLOY_KEY) == b"2"
            assert deploy_result["status"] == "success"
        else:
            assert redis_client.get(STARTED_DEPLOY_KEY) == b"1"
            assert "Not run again" in deploy_result["content"][0]["text"]
        assert bot.services.stores.jobs.pending_count() == 0


def test_a_job_whose_handler_escaped_is_claimed_and_run_again_by_the_same_worker(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The handler raised out to the pool's boundary (the audit trail refused the quarantine's record): no ack, no
    retry, no hand-back. It used to stay held by this worker for good, every stale claim of it dropped: never run
    again."""
    with running_bot(redis_client) as bot:
        jobs = bot.services.stores.jobs
        redis_client.xadd(keys.jobs(0), {"kind": "no such kind"})  # quarantined: audited, then acknowledged
        worker = bot.services.worker(claim_idle_ms=0)
        with monkeypatch.context() as patched:
            patched.setattr(bot.services.stores.audit, "record", _audit_down)
            assert worker.run_jobs_once(block_ms=1) == 1
        assert jobs.pending_count() == 1
        assert worker.run_jobs_once(block_ms=1) == 1  # claimed again (claim time 0) and quarantined this time
        assert jobs.pending_count() == 0


def _audit_down(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("the audit trail refused the record")
