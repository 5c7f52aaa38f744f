"""Worker processes killed and stopped: the consumer group keeps only live workers."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import redis

from state import RedisServer
from tests.bot.support.agents import BUILDS_KEY, HOLD_BUILD_KEY
from tests.bot.support.harness import Bot, demo_factory, running_bot

ROOT = Path(__file__).resolve().parents[3]
_ANSWER = "POST /pay 502 upstream timeout"  # the demo agent's answer to "logs for checkout"


def _wait(check: Callable[[], bool], what: str, *, timeout_s: float = 15) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


@contextmanager
def _worker(bot: Bot, server: RedisServer) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m bot worker`` as its own process, with a short claim time; killed if the test leaves it running."""
    environment = {
        **os.environ,
        "SLACK_BOT_TOKEN": bot.slack.token,
        "SLACK_API_URL": bot.slack.url,
        "REDIS_URL": server.url,
        "AGENT_FACTORY": "tests.bot.support.agents:held_agent",
        "JOB_CLAIM_SECONDS": "0.5",
        "LOG_LEVEL": "ERROR",
    }
    process = subprocess.Popen([sys.executable, "-m", "bot", "worker"], cwd=ROOT, env=environment)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def _builds(client: redis.Redis) -> int:
    return int(client.get(BUILDS_KEY) or 0)


def _holds_build(client: redis.Redis, builds: int) -> bool:
    return _builds(client) >= builds


def test_killed_workers_leave_the_group_once_their_job_is_claimed_and_a_stopped_one_leaves_at_once(
    redis_client: redis.Redis, redis_server: RedisServer
) -> None:
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        redis_client.set(HOLD_BUILD_KEY, "1")
        assert bot.mention("logs for checkout").status == 200
        for killed in range(3):  # each takes the job (the first reads it, the next claim it), and dies with it
            with _worker(bot, redis_server) as doomed:
                _wait(partial(_holds_build, redis_client, killed + 1), f"worker {killed + 1} holds the job")
                doomed.send_signal(signal.SIGKILL)
                doomed.wait(10)

        redis_client.delete(HOLD_BUILD_KEY)
        with _worker(bot, redis_server) as survivor:
            _wait(lambda: any(_ANSWER in text for text in bot.texts_posted()), "the survivor answers")
            assert bot.services.jobs.pending_count() == 0
            _wait(lambda: len(bot.services.jobs.consumers()) == 1, "the dead workers are removed from the group")

            survivor.send_signal(signal.SIGTERM)
            assert survivor.wait(10) == 0
        assert bot.services.jobs.consumers() == []
        assert _builds(redis_client) == 4


def test_a_worker_stopped_while_its_retry_waits_hands_the_job_to_another_at_once(redis_client: redis.Redis) -> None:
    builds = {"n": 0}

    def fails_once(*, session_id: str, store: Any) -> Any:
        builds["n"] += 1
        if builds["n"] == 1:
            raise RuntimeError("the model provider is down")
        return demo_factory(session_id=session_id, store=store)

    with running_bot(redis_client, agent_factory=fails_once) as bot:
        stopping = bot.services.worker(claim_idle_ms=60_000)
        stopping.retry_first_s = 30  # its own retry would come late
        bot.mention("logs for checkout")
        assert stopping.run_jobs_once(block_ms=100) == 1
        stopping.leave()
        assert stopping.consumer in bot.services.jobs.consumers()  # it still holds the job: kept until claimed

        other = bot.services.worker(claim_idle_ms=60_000)
        assert other.run_jobs_once(block_ms=1) == 1  # claimed at once, not after the claim time
        bot.drain()
        assert _ANSWER in bot.texts_posted()[-1]
        assert builds["n"] == 2
        assert bot.services.jobs.pending_count() == 0
        assert other.consumer in bot.services.jobs.consumers()
