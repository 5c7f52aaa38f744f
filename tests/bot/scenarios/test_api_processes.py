"""The HTTP API as it runs in production: keys issued by the operator command, the web process under
gunicorn (the Procfile), the worker apart; a web process killed while a client waits loses nothing."""

import re
import sys
import threading
import time
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import redis

from bench.serving import free_port, wait_healthy
from tests.bot.support.api_client import DEPLOY, ApiCaller
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.people import APPROVER, CHANNEL, CHANNEL_MEMBERS, PEOPLE
from tests.bot.support.processes import run_bot
from tests.bot.support.web_processes import (
    bot_settings,
    click_approve,
    kill,
    process,
    web_command,
)


def _created_key(redis_url: str, name: str) -> str:
    created = run_bot(["api-key", "create", "--name", name], REDIS_URL=redis_url)
    assert created.returncode == 0, created.stderr
    match = re.search(r"^api key: (\S+)$", created.stdout, re.MULTILINE)
    assert match is not None, created.stdout
    return match.group(1)


def test_api_key_commands_create_list_and_revoke(redis_url: str, redis_client: redis.Redis) -> None:
    # redis_client: the target's data is flushed first
    key = _created_key(redis_url, "ci-runner")
    assert key.startswith("sk_signoff_")
    assert "callback secret: whsec_" in run_bot(["api-key", "create", "--name", "other"], REDIS_URL=redis_url).stdout
    again = run_bot(["api-key", "create", "--name", "ci-runner"], REDIS_URL=redis_url)
    assert (again.returncode, "exists already" in again.stderr) == (1, True)
    listed = run_bot(["api-key", "list"], REDIS_URL=redis_url).stdout
    assert [line.split("\t")[0] for line in listed.splitlines()] == ["ci-runner", "other"]
    assert key not in listed
    assert run_bot(["api-key", "revoke", "--name", "ci-runner"], REDIS_URL=redis_url).returncode == 0
    assert run_bot(["api-key", "revoke", "--name", "ci-runner"], REDIS_URL=redis_url).returncode == 1
    bad = run_bot(["api-key", "create", "--name", "two words"], REDIS_URL=redis_url)
    assert (bad.returncode, "--name" in bad.stderr) == (2, True)
    unset = run_bot(["api-key", "list"])
    assert (unset.returncode, "REDIS_URL" in unset.stderr) == (2, True)


@pytest.mark.single_redis  # the API on a cluster: test_api.py runs on both
def test_a_web_process_killed_while_a_client_waits_loses_no_request(redis_url: str, redis_client: redis.Redis) -> None:
    key = _created_key(redis_url, "ci-runner")
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with FakeSlack(users=users, channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        settings = bot_settings(slack, redis_url)
        port = free_port()
        with process([sys.executable, "-m", "bot", "worker"], settings), process(web_command(port), settings) as web:
            wait_healthy(port, [web])
            api = ApiCaller(f"http://127.0.0.1:{port}", key)
            asked = api.ask(DEPLOY, idempotency_key="deploy-1")
            assert asked.status_code == 201, asked.text
            slack.wait_for("chat.postMessage", timeout=20)

            outcome: dict[str, Any] = {}

            def wait_for_decision() -> None:
                try:
                    api.get(asked.json()["id"], wait="30s")
                except httpx.HTTPError as error:
                    outcome["error"] = error

            waiting = threading.Thread(target=wait_for_decision)
            waiting.start()
            kill(web)  # gunicorn and its workers, as a crash or an OOM kill would end them
            waiting.join(40)
            assert "error" in outcome  # the client saw its connection die

        worker = [sys.executable, "-m", "bot", "worker"]
        with process(web_command(port), settings) as web, process(worker, settings):
            wait_healthy(port, [web])
            again = ApiCaller(f"http://127.0.0.1:{port}", key)
            # A retry of the request itself names the same request: no second message.
            assert again.ask(DEPLOY, idempotency_key="deploy-1").status_code == 200
            result: dict[str, Any] = {}
            waiter = threading.Thread(target=lambda: result.update(again.get(asked.json()["id"], wait="30s").json()))
            waiter.start()
            click_approve(port, slack)
            waiter.join(35)
            assert result["status"] == "approved"
            assert result["decision"]["decided_by"] == APPROVER
            assert len([m for m in slack.messages(CHANNEL) if "restart_service" in m.get("text", "")]) == 1


@pytest.mark.single_redis  # the API on a cluster: test_api_waits.py runs on both
def test_under_gunicorn_long_polls_leave_a_thread_for_slacks_clicks(redis_url: str, redis_client: redis.Redis) -> None:
    """Three threads, at most two long-polls: a third wait is refused at once, so a click finds a thread."""
    key = _created_key(redis_url, "ci-runner")
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with FakeSlack(users=users, channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        settings = bot_settings(slack, redis_url, API_MAX_WAITS="2")
        port = free_port()
        web_process = web_command(port, workers=1, threads=3)
        with (
            process([sys.executable, "-m", "bot", "worker"], settings),
            process(web_process, settings) as web,
            ThreadPoolExecutor(3) as pool,
        ):
            wait_healthy(port, [web])
            api = ApiCaller(f"http://127.0.0.1:{port}", key)
            request_id = api.ask(DEPLOY).json()["id"]
            slack.wait_for("chat.postMessage", timeout=20)

            waits = [pool.submit(api.get, request_id, wait="30s") for _ in range(3)]
            done, waiting = futures.wait(waits, timeout=10, return_when=futures.FIRST_COMPLETED)
            [refused] = done  # one answered at once; two hold their threads
            assert (refused.result().status_code, refused.result().headers["Retry-After"]) == (429, "1")
            time.sleep(0.2)
            assert not any(future.done() for future in waiting)

            started = time.monotonic()
            click_approve(port, slack)  # the one thread the waits left
            assert time.monotonic() - started < 3  # within Slack's 3 s (uncapped: after a wait ends, 30 s)
            decided = [future.result(timeout=10).json() for future in waiting]
            assert [(d["status"], d["decision"]["decided_by"]) for d in decided] == [("approved", APPROVER)] * 2

            again = api.ask(DEPLOY, idempotency_key="next").json()["id"]
            started = time.monotonic()
            accepted = api.get(again, wait="1s")  # the slots are back: this one waits its second
            assert (accepted.status_code, accepted.json()["status"]) == (200, "pending")
            assert time.monotonic() - started >= 1
