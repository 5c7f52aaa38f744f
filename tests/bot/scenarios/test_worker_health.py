"""The worker's liveness probe: ``python -m bot worker-health`` exits 0 while a real ``python -m bot worker`` beats,
1 once it is frozen (a hung process stops beating) or stopped, 2 without a Redis to ask."""

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
import pytest

from bot.observe.worker_http import worker_wsgi_app
from bot.store.approvals import index_build
from bot.store.queues.worker_heartbeats import WorkerHeartbeats
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import Bot
from tests.bot.support.http_server import serve_wsgi
from tests.bot.support.processes import run_bot
from tests.bot.support.web_processes import bot_settings, process

_BEAT_S = "0.2"


def _health(redis_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_bot(["worker-health", *args], REDIS_URL=redis_url, WORKER_HEARTBEAT_SECONDS=_BEAT_S)


def _wait_for_health(redis_url: str, status: int, timeout_s: float = 30) -> subprocess.CompletedProcess[str]:
    deadline = time.monotonic() + timeout_s
    while True:
        ran = _health(redis_url)
        if ran.returncode == status or time.monotonic() > deadline:
            return ran
        time.sleep(0.1)


@pytest.mark.single_redis  # one worker process; the heartbeat key is one global key either way
def test_worker_health_follows_a_real_worker_alive_frozen_and_stopped(redis_url: str, redis_client: Any) -> None:
    assert _health(redis_url).returncode == 1  # no worker yet
    with FakeSlack() as slack:
        settings = bot_settings(slack, redis_url, WORKER_HEARTBEAT_SECONDS=_BEAT_S)
        with process([sys.executable, "-m", "bot", "worker"], settings) as worker:
            alive = _wait_for_health(redis_url, 0)
            assert alive.returncode == 0, alive.stderr
            assert "last beat" in alive.stdout
            assert _health(redis_url, "--all").returncode == 0

            os.kill(worker.pid, signal.SIGSTOP)  # hung: the process lives, nothing in it runs
            try:
                time.sleep(1.0)  # three beats missed: 0.6 s
                frozen = _health(redis_url)
                assert frozen.returncode == 1
                assert "no live worker on" in frozen.stderr
            finally:
                os.kill(worker.pid, signal.SIGCONT)
            assert _wait_for_health(redis_url, 0).returncode == 0

            worker.send_signal(signal.SIGTERM)
            assert worker.wait(30) == 0
        # A worker stopped cleanly takes its heartbeat with it: dead at once, not after three beats.
        assert _health(redis_url, "--max-age", "60").returncode == 1


def test_worker_health_without_redis_url_names_it() -> None:
    ran = run_bot(["worker-health"])
    assert ran.returncode == 2
    assert "REDIS_URL" in ran.stderr


def test_a_hung_loop_stops_the_heartbeat_and_fails_the_workers_healthz(bot: Bot) -> None:
    heartbeats = WorkerHeartbeats(bot.services.stores.redis, beat_every_s=0.1)
    # Above the other loops' longest idle step (a blocking read of 0.5 s, or a second waiting for a free thread),
    # so that only the hung one is named, even on a loaded machine.
    worker = replace(bot.services.worker(), heartbeats=heartbeats, stall_s=2.0)
    application = worker_wsgi_app(stalled_loops=worker.stalled_loops, state=None)
    bot.slack.slow_next("chat.postMessage", 6.0)  # the outbox loop's next step hangs in Slack's answer
    assert not index_build.built(bot.services.stores)
    running = threading.Thread(target=worker.run_forever)
    running.start()
    try:
        with serve_wsgi(application) as url:
            _until(lambda: worker.consumer in heartbeats.live())
            assert index_build.built(bot.services.stores)  # the worker builds the indexes before its loops start
            assert httpx.get(f"{url}healthz", timeout=5).json() == {"status": "alive", "stalled": []}
            bot.mention("restart checkout")
            _until(lambda: worker.stalled_loops() == ["outbox"])
            hung = httpx.get(f"{url}healthz", timeout=5)
            assert (hung.status_code, hung.json()) == (503, {"status": "hung", "stalled": ["outbox"]})
            _until(lambda: worker.consumer not in heartbeats.live())
            _until(lambda: worker.consumer in heartbeats.live(), timeout_s=15)  # Slack answered: it beats again
    finally:
        worker.stop()
        running.join(30)
    assert worker.consumer not in heartbeats.live()  # a worker stopped cleanly takes its beat with it


def _until(condition: Callable[[], bool], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.05)
