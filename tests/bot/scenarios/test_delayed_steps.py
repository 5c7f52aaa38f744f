"""Recovery within seconds: a step that meets a Redis outage is retried by its own worker (the thread told once),
the bot's Redis client waits out a short outage in place, and an outbox lease runs out when the settings say."""

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis
from pydantic import SecretStr

from bot.render.texts import thread_posts
from bot.services import Services, connect_redis
from bot.settings import Settings
from bot.store.queues.outbox import OutboxEntry
from state import RedisServer
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import Bot, demo_factory, running_bot, take_over
from tests.bot.support.people import CHANNEL
from tests.outage import redis_stopped

_ANSWER = "POST /pay 502 upstream timeout"  # the demo agent's answer to "logs for checkout"


def _outage_on_first_calls(server: RedisServer, calls: int, *, down_s: float) -> Callable[..., Any]:
    """The demo agent, but its first ``calls`` builds stop Redis (back after ``down_s``): the step then fails."""
    left = {"calls": calls}

    def factory(*, session_id: str, store: Any) -> Any:
        if left["calls"]:
            left["calls"] -= 1
            server.stop()
            threading.Timer(down_s, server.start).start()
        return demo_factory(session_id=session_id, store=store)

    return factory


def _work_until(bot: Bot, done: Callable[[], bool], *, timeout_s: float) -> float:
    """Run the worker's job and outbox steps (as its loops do, shrugging off Redis errors) until ``done``."""
    started = time.monotonic()
    while not done():
        assert time.monotonic() - started < timeout_s, f"not done after {timeout_s}s: {bot.texts_posted()}"
        try:
            bot.worker.run_jobs_once(block_ms=20)
            bot.worker.deliverer.deliver_due()
        except redis.RedisError:
            time.sleep(0.05)
    return time.monotonic() - started


def test_a_step_failed_by_a_redis_outage_is_retried_by_its_worker_and_the_thread_told_once(
    own_redis: RedisServer,
) -> None:
    client = connect_redis(own_redis.url, retry_s=0.1)  # shorter than the outage: the step fails
    factory = _outage_on_first_calls(own_redis, 2, down_s=0.4)
    with running_bot(client, agent_factory=factory) as bot:
        bot.worker.claim_idle_ms = 60_000  # no other worker would take the job over within the test
        bot.worker.retries.first_s = 0.2
        bot.mention("logs for checkout")

        took_s = _work_until(bot, lambda: any(_ANSWER in text for text in bot.texts_posted()), timeout_s=10)

        assert bot.texts_posted() == [
            thread_posts.redis_unreachable(),
            bot.texts_posted()[-1],
        ]  # told once, two outages
        assert took_s < 5
        assert bot.services.stores.jobs.pending_count() == 0
        bot.drain()
        assert len(bot.texts_posted()) == 2


def test_a_retry_that_falls_due_while_redis_is_down_is_kept_for_when_it_is_back(own_redis: RedisServer) -> None:
    builds = {"n": 0}

    def fails_once(*, session_id: str, store: Any) -> Any:
        builds["n"] += 1
        if builds["n"] == 1:
            raise RuntimeError("the model provider is down")
        return demo_factory(session_id=session_id, store=store)

    with running_bot(connect_redis(own_redis.url, retry_s=0.1), agent_factory=fails_once) as bot:
        bot.worker.claim_idle_ms = 60_000  # no claim of the job as stale within the test: only its retry runs it
        bot.worker.retries.first_s = 0.05
        bot.mention("logs for checkout")
        assert bot.worker.run_jobs_once(block_ms=20) == 1  # fails; its retry is due in 50 ms
        time.sleep(0.1)
        with redis_stopped(own_redis), pytest.raises(redis.ConnectionError):
            bot.worker.run_jobs_once(block_ms=20)  # the retry is due, Redis cannot hand the job over
        assert bot.worker.run_jobs_once(block_ms=20) == 1
        assert builds["n"] == 2
        bot.drain()
        assert _ANSWER in bot.texts_posted()[-1]


class _Killed(BaseException):
    """The dispatcher process dies in the middle of a Slack call (nothing of it runs after this)."""


def test_an_entry_held_by_a_dead_dispatcher_is_sent_once_the_configured_lease_runs_out(
    redis_client: redis.Redis,
) -> None:
    with FakeSlack() as slack:
        settings = Settings(slack_bot_token=SecretStr(slack.token), slack_api_url=slack.url, outbox_lease_seconds=0.3)
        services = Services(settings, redis_client=redis_client, agent_factory=demo_factory)
        services.stores.outbox.send_later(OutboxEntry("post_message", {"channel": CHANNEL, "text": "hello"}))
        post = services.slack.chat_postMessage

        def die(**_arguments: Any) -> Any:
            raise _Killed

        services.slack.chat_postMessage = die  # type: ignore[method-assign]
        with pytest.raises(_Killed):
            services.deliverer.deliver_due()
        services.slack.chat_postMessage = post  # type: ignore[method-assign]
        died = time.monotonic()

        assert services.deliverer.deliver_due() == 0  # leased to the dead dispatcher
        while not slack.calls("chat.postMessage"):
            assert time.monotonic() - died < 5, "the entry never came back"
            services.deliverer.deliver_due()
            time.sleep(0.02)
        assert 0.2 < time.monotonic() - died < 2
        assert [call.args["text"] for call in slack.calls("chat.postMessage")] == ["hello"]


def test_the_bots_redis_client_rides_out_an_outage_within_its_retry_budget(own_redis: RedisServer) -> None:
    client = connect_redis(own_redis.url, retry_s=3)
    client.set("probe", "before")
    own_redis.stop()
    threading.Timer(0.5, own_redis.start).start()

    assert client.get("probe") == b"before"  # waited in place for the restart, no error


def test_the_bots_redis_client_gives_up_after_its_retry_budget(own_redis: RedisServer) -> None:
    client = connect_redis(own_redis.url, retry_s=0.5)
    client.ping()
    with redis_stopped(own_redis):
        started = time.monotonic()
        with pytest.raises(redis.ConnectionError):
            client.ping()
        waited = time.monotonic() - started
    assert 0.25 < waited < 1.0
    assert client.ping()


def test_a_worker_never_retries_a_job_another_worker_took_over(redis_client: redis.Redis) -> None:
    builds = {"n": 0}

    def fails_twice(*, session_id: str, store: Any) -> Any:
        builds["n"] += 1
        if builds["n"] <= 2:
            raise RuntimeError("the model provider is down")
        return demo_factory(session_id=session_id, store=store)

    with running_bot(redis_client, agent_factory=fails_twice) as bot:
        first = bot.services.worker(claim_idle_ms=60_000)
        first.retries.first_s = 0.05
        bot.mention("logs for checkout")
        assert first.run_jobs_once(block_ms=100) == 1  # fails; its own retry is due in 50 ms
        taker = bot.services.worker(claim_idle_ms=0)
        taker.retries.first_s = 0.05
        assert take_over(taker) == 1  # takes the job over, fails too
        time.sleep(0.1)

        assert first.run_jobs_once(block_ms=1) == 0  # the job is no longer its own: not run again here
        assert builds["n"] == 2
        assert taker.run_jobs_once(block_ms=1) == 1
        bot.drain()
        assert builds["n"] == 3
        assert _ANSWER in bot.texts_posted()[-1]
        assert sum("will retry" in text for text in bot.texts_posted()) == 1
