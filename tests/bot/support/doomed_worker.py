"""A real ``python -m bot worker`` process, SIGKILLed at a chosen point (a Redis key its agent sets)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis

from state import RedisServer
from tests.bot.support.harness import Bot

ROOT = Path(__file__).resolve().parents[3]


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
    client: redis.Redis,
    key: str,
    bot: Bot,
    redis_server: RedisServer,
    *,
    agent_factory: str = "tests.bot.support.agents:counting_agent",
) -> None:
    """Run a worker (with ``agent_factory``) and SIGKILL it as soon as ``key`` exists."""
    environment = {
        **os.environ,
        "SLACK_BOT_TOKEN": bot.slack.token,
        "SLACK_API_URL": bot.slack.url,
        "REDIS_URL": redis_server.url,
        "AGENT_FACTORY": agent_factory,
        "LOG_LEVEL": "WARNING",
    }
    doomed = subprocess.Popen(
        [sys.executable, "-m", "bot", "worker"], cwd=ROOT, env=environment, stderr=subprocess.PIPE
    )
    try:
        wait_for_key(client, key, doomed)
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
    finally:
        if doomed.poll() is None:
            doomed.kill()
