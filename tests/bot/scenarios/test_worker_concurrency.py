"""A worker running several jobs at once (``WORKER_CONCURRENCY``) keeps the guarantees of one running them in turn.

Two jobs of one session never run at once; held jobs stay claimed by one heartbeat while they run long; a killed
worker's jobs are each claimed by exactly one other worker and run once; stale jobs are looked for now and then,
not before every read.
"""

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import redis

from agent import Agent, ScriptedModel
from agent.models.base import ModelTurn
from agent.models.scripted import text_turn
from bot.store import keys
from loopback_slack import slack_requests
from state.shapes import Message
from tests.bot.support.agents import BUILDS_KEY, HOLD_BUILD_KEY, held_agent
from tests.bot.support.doomed_worker import kill, wait_until, worker_process
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import CHANNEL, REQUESTER


class _Sessions:
    """Agents that answer after ``hold`` returns, counting how many calls of each session run at once."""

    def __init__(self, hold: Callable[[], object]) -> None:
        self._hold = hold
        self._lock = threading.Lock()
        self._running: Counter[str] = Counter()
        self.most_at_once_per_session = 0
        self.most_at_once = 0
        self.calls = 0

    def factory(self, *, session_id: str, store: Any) -> Agent:
        def respond(_messages: list[Message]) -> ModelTurn:
            with self._lock:
                self.calls += 1
                self._running[session_id] += 1
                self.most_at_once_per_session = max(self.most_at_once_per_session, self._running[session_id])
                self.most_at_once = max(self.most_at_once, sum(self._running.values()))
            try:
                self._hold()
            finally:
                with self._lock:
                    self._running[session_id] -= 1
            return text_turn("answered")

        return Agent(ScriptedModel(respond), [], session_id=session_id, store=store)


_timestamps = itertools.count(1)


def _mention(bot: Bot, text: str, *, thread_ts: str | None = None) -> str:
    """Mention the bot (in a new thread unless ``thread_ts``); return the thread's ts."""
    ts = f"{1700000000 + next(_timestamps)}.000100"
    event = slack_requests.app_mention(
        user=REQUESTER, channel=CHANNEL, text=f"<@U0BOT> {text}", ts=ts, thread_ts=thread_ts
    )
    assert bot.poster.post_event(event).status == 200
    return thread_ts or ts


def _replies(bot: Bot, thread_ts: str) -> list[str]:
    return [text for text in bot.thread_texts(thread_ts) if text == "answered"]


def test_two_jobs_of_one_session_never_run_at_once_while_other_sessions_run_alongside(
    redis_client: redis.Redis,
) -> None:
    sessions = _Sessions(hold=lambda: time.sleep(0.3))
    with running_bot(redis_client, agent_factory=sessions.factory) as bot:
        thread_ts, other_ts = _mention(bot, "one"), _mention(bot, "two")
        _mention(bot, "three, in the first thread", thread_ts=thread_ts)

        worker = bot.services.worker(concurrency=4)
        assert worker.run_jobs_once(block_ms=100) == 3  # all three taken at once
        bot.drain()

        assert sessions.calls == 3
        assert sessions.most_at_once_per_session == 1
        assert sessions.most_at_once == 2  # the other session's job ran alongside
        assert _replies(bot, thread_ts) == ["answered", "answered"]
        assert _replies(bot, other_ts) == ["answered"]


def test_one_heartbeat_keeps_every_long_job_claimed(redis_client: redis.Redis) -> None:
    release = threading.Event()
    sessions = _Sessions(hold=lambda: release.wait(10))
    with running_bot(redis_client, agent_factory=sessions.factory) as bot:
        threads = [_mention(bot, text) for text in ("one", "two", "three")]
        busy = bot.services.worker(claim_idle_ms=300, concurrency=4)
        running = threading.Thread(target=busy.run_jobs_once, kwargs={"block_ms": 1000})
        running.start()
        deadline = time.monotonic() + 10
        while sessions.calls < 3:
            assert time.monotonic() < deadline
            time.sleep(0.01)

        assert sum(thread.name == "heartbeat" for thread in threading.enumerate()) == 1
        other = bot.services.worker(claim_idle_ms=300)
        time.sleep(0.9)  # three claim times: without the heartbeat all three would look abandoned
        assert other.run_jobs_once(block_ms=1) == 0

        release.set()
        running.join(10)
        bot.drain()
        assert sessions.calls == 3
        assert [_replies(bot, thread_ts) for thread_ts in threads] == [["answered"]] * 3


def test_a_killed_worker_s_jobs_are_each_claimed_once(
    redis_client: redis.Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)  # held_agent counts its builds there
    with running_bot(redis_client, agent_factory=held_agent) as bot:
        redis_client.set(HOLD_BUILD_KEY, "1")
        threads = [_mention(bot, text) for text in ("logs for checkout", "logs for api", "logs for search")]
        with worker_process(
            bot, redis_url, AGENT_FACTORY="tests.bot.support.agents:held_agent", WORKER_CONCURRENCY="4"
        ) as doomed:
            wait_until(lambda: int(redis_client.get(BUILDS_KEY) or 0) == 3, "the worker runs all three jobs")
            kill(doomed)
        assert bot.services.stores.jobs.pending_count() == 3

        redis_client.delete(HOLD_BUILD_KEY)
        time.sleep(0.3)  # the dead worker's jobs are now idle longer than the survivors' claim time
        survivors = [bot.services.worker(claim_idle_ms=200, concurrency=4) for _ in range(2)]
        taken: list[int] = []
        racing = [
            threading.Thread(target=lambda worker=worker: taken.append(worker.run_jobs_once(block_ms=1)))
            for worker in survivors
        ]
        for thread in racing:
            thread.start()
        for thread in racing:
            thread.join(30)
        bot.drain()

        assert sum(taken) == 3
        assert int(redis_client.get(BUILDS_KEY) or 0) == 6  # three in the killed worker, three after
        for thread_ts in threads:
            [reply] = [call for call in bot.slack.calls("chat.postMessage") if call.args.get("thread_ts") == thread_ts]
            assert "\n" in str(reply.args.get("text"))  # the log lines, posted once
        assert bot.services.stores.jobs.pending_count() == 0


@pytest.mark.single_redis  # counts the commands one server saw; a cluster's masters each count their own
def test_stale_jobs_are_looked_for_now_and_then_not_before_every_read(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=held_agent) as bot:
        worker = bot.services.worker(claim_idle_ms=60_000)
        before = _calls_of(redis_client, "xautoclaim")
        for _ in range(5):
            worker.run_jobs_once(block_ms=1)
        assert _calls_of(redis_client, "xautoclaim") - before == len(keys.shards())  # one look: each shard's stream


def _calls_of(client: redis.Redis, command: str) -> int:
    stats: dict[str, Any] = client.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


def test_the_heartbeat_never_spins_even_with_a_claim_time_of_zero(redis_client: redis.Redis) -> None:
    sessions = _Sessions(hold=lambda: time.sleep(0.3))
    with running_bot(redis_client, agent_factory=sessions.factory) as bot:
        thread_ts = _mention(bot, "one")
        before = _calls_of(redis_client, "xclaim")
        assert bot.services.worker(claim_idle_ms=0).run_jobs_once(block_ms=100) == 1
        assert _calls_of(redis_client, "xclaim") - before < 100  # a touch per 10 ms at most (spinning: thousands)
        bot.drain()
        assert _replies(bot, thread_ts) == ["answered"]
