"""A worker process killed mid-job: another worker claims the job and finishes it; no tool runs twice."""

import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import redis

from bot import ids
from state import RedisServer
from tests.bot.agents import HOLD_KEY, STARTED_KEY, completions, counting_agent
from tests.bot.harness import APPROVER, running_bot

ROOT = Path(__file__).resolve().parents[2]


def _wait_for_key(client: redis.Redis, key: str, process: subprocess.Popen[bytes], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not client.exists(key):
        assert process.poll() is None, (
            f"worker exited early: {process.stderr.read().decode() if process.stderr else ''}"
        )
        assert time.monotonic() < deadline, f"{key} never set"
        time.sleep(0.02)


def test_a_killed_worker_leaves_the_job_to_another_and_no_tool_runs_twice(
    redis_client: redis.Redis, redis_server: RedisServer
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
        environment = {
            **os.environ,
            "SLACK_BOT_TOKEN": bot.slack.token,
            "SLACK_API_URL": bot.slack.url,
            "REDIS_URL": redis_server.url,
            "AGENT_FACTORY": "tests.bot.agents:counting_agent",
            "LOG_LEVEL": "WARNING",
        }
        doomed = subprocess.Popen(
            [sys.executable, "-m", "bot", "worker"], cwd=ROOT, env=environment, stderr=subprocess.PIPE
        )
        try:
            _wait_for_key(redis_client, STARTED_KEY, doomed)  # deploy done, notify running
            assert completions(redis_client, "deploy") == 1
            doomed.send_signal(signal.SIGKILL)
            doomed.wait(10)
        finally:
            if doomed.poll() is None:
                doomed.kill()
        assert bot.services.jobs.pending_count() == 1  # the job is still pending, owned by the dead worker

        redis_client.delete(HOLD_KEY)
        survivor = bot.services.worker(claim_idle_ms=0)
        survivor.run_jobs_once(block_ms=1)
        bot.drain()

        assert completions(redis_client, "deploy") == 1
        assert completions(redis_client, "notify") == 1
        assert bot.thread_texts(thread_ts)[-1] == "deployed and told"
        assert bot.services.jobs.pending_count() == 0
