"""Worker processes killed and stopped: the consumer group keeps only live workers."""

import signal
import subprocess
from contextlib import AbstractContextManager
from functools import partial
from typing import Any

import redis

from tests.bot.support.agents import BUILDS_KEY, HOLD_BUILD_KEY
from tests.bot.support.doomed_worker import kill, wait_until, worker_process
from tests.bot.support.harness import Bot, demo_factory, running_bot

_ANSWER = "POST /pay 502 upstream timeout"  # the demo agent's answer to "logs for checkout"


def _worker(bot: Bot, redis_url: str) -> AbstractContextManager[subprocess.Popen[bytes]]:
    """A worker process building the held agent, with a short claim time."""
    return worker_process(
        bot, redis_url, AGENT_FACTORY="tests.bot.support.agents:held_agent", JOB_CLAIM_SECONDS="0.5", LOG_LEVEL="ERROR"
    )


def _builds(client: redis.Redis) -> int:
    return int(client.get(BUILDS_KEY) or 0)


def _holds_build(client: redis.Redis, builds: int) -> bool:
    return _builds(client) >= builds


def test_killed_workers_leave_the_group_once_their_job_is_claimed_and_a_stopped_one_leaves_at_once(
    redis_client: redis.Redis, redis_url: str
) -> None:
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        redis_client.set(HOLD_BUILD_KEY, "1")
        assert bot.mention("logs for checkout").status == 200
        for killed in range(3):  # each takes the job (the first reads it, the next claim it), and dies with it
            with _worker(bot, redis_url) as doomed:
                wait_until(partial(_holds_build, redis_client, killed + 1), f"worker {killed + 1} holds the job")
                kill(doomed)

        redis_client.delete(HOLD_BUILD_KEY)
        with _worker(bot, redis_url) as survivor:
            wait_until(lambda: any(_ANSWER in text for text in bot.texts_posted()), "the survivor answers")
            assert bot.services.stores.jobs.pending_count() == 0
            wait_until(
                lambda: len(bot.services.stores.jobs.consumers()) == 1, "the dead workers are removed from the group"
            )

            survivor.send_signal(signal.SIGTERM)
            assert survivor.wait(10) == 0
        assert bot.services.stores.jobs.consumers() == []
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
        stopping.retries.first_s = 30  # its own retry would come late
        bot.mention("logs for checkout")
        assert stopping.run_jobs_once(block_ms=100) == 1
        stopping.leave()
        assert stopping.consumer in bot.services.stores.jobs.consumers()  # it still holds the job: kept until claimed

        other = bot.services.worker(claim_idle_ms=60_000)
        assert other.run_jobs_once(block_ms=1) == 1  # claimed at once, not after the claim time
        bot.drain()
        assert _ANSWER in bot.texts_posted()[-1]
        assert builds["n"] == 2
        assert bot.services.stores.jobs.pending_count() == 0
        assert other.consumer in bot.services.stores.jobs.consumers()
