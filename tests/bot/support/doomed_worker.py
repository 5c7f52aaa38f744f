"""A real ``python -m bot worker`` process beside a test's bot, and SIGKILL at a chosen point (a Redis key its agent
sets): the one harness for the tests that kill workers."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from bot.render import action_ids as ids
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER
from tests.bot.support.processes import ROOT

COUNTING_AGENT = "tests.bot.support.agents:counting_agent"


@contextmanager
def worker_process(
    bot: Bot, redis_url: str, *, capture_stderr: bool = False, stderr_to: Path | None = None, **settings: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m bot worker`` on the bot's Slack and Redis, with ``settings`` (e.g. ``AGENT_FACTORY``) in its
    environment; killed if the test leaves it running. Its stderr is piped (``capture_stderr``: a worker that logs
    much blocks once the pipe is full, unless it is read) or written to ``stderr_to``."""
    environment = {
        **os.environ,
        "SLACK_BOT_TOKEN": bot.slack.token,
        "SLACK_API_URL": bot.slack.url,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "WARNING",
        **settings,
    }
    log = stderr_to.open("wb") if stderr_to is not None else None
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "worker"],
        cwd=ROOT,
        env=environment,
        stderr=log if log is not None else subprocess.PIPE if capture_stderr else None,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        if log is not None:
            log.close()


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL: the worker dies on the spot, acknowledging nothing."""
    process.send_signal(signal.SIGKILL)
    process.wait(10)


def wait_until(check: Callable[[], bool], what: str, *, timeout_s: float = 15) -> None:
    """Poll ``check()`` until it is true; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def wait_for_key(client: redis.Redis, key: str, process: subprocess.Popen[bytes], timeout_s: float = 30) -> None:
    """Wait until ``key`` exists, failing if the worker exits first."""
    deadline = time.monotonic() + timeout_s
    while not client.exists(key):
        assert process.poll() is None, (
            f"worker exited early: {process.stderr.read().decode() if process.stderr else ''}"
        )
        assert time.monotonic() < deadline, f"{key} never set"
        time.sleep(0.02)


def kill_a_worker_once_it_sets(
    client: redis.Redis, key: str, bot: Bot, redis_url: str, *, agent_factory: str = COUNTING_AGENT
) -> None:
    """Run a worker (with ``agent_factory``) and SIGKILL it once ``key`` exists and its dispatcher has sent what
    was queued (the agent sets ``key`` inside a tool the test holds open, so the tool is still running then).

    A dispatcher killed while sending keeps that conversation's lane until its lease runs out (30 s, as
    ``tests/bot/slack/outbound/test_delivery.py`` shows): a race these tests are not about, which made them flaky.
    """
    with worker_process(bot, redis_url, capture_stderr=True, AGENT_FACTORY=agent_factory) as doomed:
        wait_for_key(client, key, doomed)
        wait_until(
            lambda: bot.services.stores.outbox.pending() == 0, "the doomed worker's dispatcher sent what was queued"
        )
        assert doomed.poll() is None, "the worker exited before it was killed"
        kill(doomed)


def approve_and_kill_the_worker_in_the_tool(
    bot: Bot,
    client: redis.Redis,
    redis_url: str,
    request: str,
    *,
    hold_key: str,
    started_key: str,
    agent_factory: str = COUNTING_AGENT,
) -> str:
    """Ask ``request``, hold its tool open (``hold_key``), approve it and SIGKILL the worker once the tool has
    started (``started_key``); then let go of the hold. Returns the request's thread ts."""
    bot.mention(request)
    bot.drain()
    thread_ts = str(bot.approval_messages()[0]["thread_ts"])
    client.set(hold_key, "1")
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    kill_a_worker_once_it_sets(client, started_key, bot, redis_url, agent_factory=agent_factory)
    client.delete(hold_key)
    return thread_ts
