"""Metrics as production runs them: the Procfile's gunicorn (two workers, multiprocess mode) adds up what each of
its processes counted, whichever one a scrape reaches; ``python -m bot worker`` serves its own on ``METRICS_PORT``,
with ``/healthz`` beside them; with ``METRICS_PORT`` the web process serves ``/metrics`` and ``/readyz`` only there."""

import sys
from typing import Any

import httpx
import pytest
import redis

from bench.serving import free_port, wait_healthy
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.people import CHANNEL, CHANNEL_MEMBERS, PEOPLE
from tests.bot.support.scrapes import Scrape
from tests.bot.support.web_processes import (
    ask_then_approve,
    bot_settings,
    process,
    web_command,
)


@pytest.mark.single_redis  # processes of their own; the Redis layout is not what this checks
def test_gunicorn_workers_add_up_and_the_worker_serves_its_own_metrics(
    redis_url: str, redis_client: redis.Redis
) -> None:
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with FakeSlack(users=users, channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        metrics_port, port = free_port(), free_port()
        settings = bot_settings(slack, redis_url)
        worker_settings = {**settings, "METRICS_PORT": str(metrics_port), "HOST": "127.0.0.1"}
        with (
            process([sys.executable, "-m", "bot", "worker"], worker_settings),
            process(web_command(port, workers=2), settings) as web,
        ):
            wait_healthy(port, [web])
            wait_healthy(metrics_port)
            ask_then_approve(port, slack)

            web_metrics = f"http://127.0.0.1:{port}/metrics"
            for _ in range(
                6
            ):  # whichever worker answers (each scrape a new connection), the click counted in one is there
                assert Scrape(web_metrics).value("signoff_click_seconds_count") == 1
                approved = {"outcome": "approve", "source": "button"}
                assert Scrape(web_metrics).value("signoff_decisions_total", approved) == 1

            slack.wait_for("chat.postMessage", count=2, timeout=20)  # the worker resumed the agent
            worker_metrics = Scrape(f"http://127.0.0.1:{metrics_port}/metrics")
            assert worker_metrics.value("signoff_jobs_total", {"kind": "resume", "outcome": "done"}) == 1
            assert worker_metrics.value("signoff_state_scrape_ok") == 1
            health = httpx.get(f"http://127.0.0.1:{metrics_port}/healthz", timeout=5)
            assert (health.status_code, health.json()) == (200, {"status": "alive", "stalled": []})


@pytest.mark.single_redis  # processes of their own; the Redis layout is not what this checks
@pytest.mark.parametrize("web", ["gunicorn", "serve"])
def test_with_a_metrics_port_the_web_process_serves_metrics_and_readiness_only_there(
    redis_url: str, redis_client: redis.Redis, web: str
) -> None:
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with FakeSlack(users=users, channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        metrics_port, port = free_port(), free_port()
        settings = bot_settings(slack, redis_url, METRICS_PORT=str(metrics_port), HOST="127.0.0.1", PORT=str(port))
        command = web_command(port, workers=2) if web == "gunicorn" else [sys.executable, "-m", "bot", "serve"]
        with process(command, settings) as running:
            wait_healthy(port, [running])
            main, apart = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{metrics_port}"
            for _ in range(6):  # whichever gunicorn worker answers (each request a new connection)
                assert httpx.get(f"{main}/metrics", timeout=5).status_code == 404
                assert httpx.get(f"{main}/readyz", timeout=5).status_code == 404
                assert httpx.get(f"{main}/healthz", timeout=5).status_code == 200
                assert Scrape(f"{apart}/metrics").value("signoff_state_scrape_ok") == 1
                ready = httpx.get(f"{apart}/readyz", timeout=5)
                assert (ready.status_code, ready.json()["status"]) == (200, "ready")
                assert httpx.post(f"{apart}/slack/events", timeout=5).status_code == 404
                assert httpx.get(f"{apart}/v1/approvals", timeout=5).status_code == 404
