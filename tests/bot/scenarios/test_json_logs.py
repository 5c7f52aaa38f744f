"""``LOG_FORMAT=json``: the Procfile's web process (gunicorn) and the worker write nothing but JSON objects, one a
line, and the lines about a request name its session and approval; a malformed value ends either process at once
with one message naming ``LOG_FORMAT`` (exit 2)."""

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis

from bench.serving import free_port, wait_healthy
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.people import CHANNEL, CHANNEL_MEMBERS, PEOPLE
from tests.bot.support.policy_files import write
from tests.bot.support.processes import ROOT
from tests.bot.support.web_processes import (
    ask_then_approve,
    bot_settings,
    environment,
    web_command,
)


@contextmanager
def _logged(command: list[str], settings: dict[str, str], output: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` with stdout and stderr both in ``output``; stop it (SIGTERM) on the way out."""
    with output.open("wb") as sink:
        running = subprocess.Popen(command, cwd=ROOT, env=settings, stdout=sink, stderr=sink, start_new_session=True)
        try:
            yield running
        finally:
            if running.poll() is None:
                running.send_signal(signal.SIGTERM)
                running.wait(30)


def _run(command: list[str], settings: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, env=settings, capture_output=True, text=True, timeout=60, check=False)


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return _parsed(path.read_text(), path.name)


def _parsed(text: str, source: str) -> list[dict[str, Any]]:
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines, f"{source} is empty"
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"{source}: not a JSON line: {line!r}")
    return parsed


@pytest.mark.single_redis  # processes of their own; the log format does not depend on the Redis layout
def test_json_logs_of_a_whole_request_are_json_lines_naming_its_session_and_approval(
    redis_url: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with FakeSlack(users=users, channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        settings = bot_settings(slack, redis_url, LOG_FORMAT="json", LOG_LEVEL="INFO")
        port = free_port()
        web_log, worker_log = tmp_path / "web.log", tmp_path / "worker.log"
        with (
            _logged([sys.executable, "-m", "bot", "worker"], settings, worker_log),
            _logged(web_command(port), settings, web_log) as web,
        ):
            wait_healthy(port, [web])
            ask_then_approve(port, slack)
            slack.wait_for("chat.postMessage", count=2, timeout=20)  # the outcome, once the worker resumed

    lines = _json_lines(web_log) + _json_lines(worker_log)
    for line in lines:
        assert {"time", "level", "logger", "message"} <= line.keys(), line
    assert any(line["logger"].startswith("gunicorn") for line in lines)  # gunicorn's own lines are JSON too
    decided = [line for line in lines if "decided: approve" in line["message"]]
    assert decided
    assert all(line.get("session_id") and line.get("approval_id") for line in decided)
    jobs = [line for line in lines if line.get("job_id")]
    assert {line.get("job_kind") for line in jobs} >= {"start", "resume"}
    assert all(line.get("session_id") for line in jobs)


@pytest.mark.parametrize("command", [["worker"], ["serve"]])
def test_a_malformed_log_format_is_named_and_ends_the_process_with_status_2(command: list[str]) -> None:
    settings = environment(LOG_FORMAT="xml", SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="s")
    ran = _run([sys.executable, "-m", "bot", *command], settings)
    assert ran.returncode == 2
    assert "LOG_FORMAT" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_gunicorn_refuses_a_malformed_log_format_before_any_worker_boots() -> None:
    settings = environment(LOG_FORMAT="xml")
    ran = _run(web_command(free_port()), settings)
    assert ran.returncode == 2
    assert "LOG_FORMAT" in ran.stderr
    assert "Traceback" not in ran.stderr


@pytest.mark.single_redis  # the policy case needs a Redis that answers; the layout is not what is tested
@pytest.mark.parametrize(
    ("case", "named"),
    [
        ("no-redis-url", "REDIS_URL is not set"),
        ("bad-setting", "WORKER_CONCURRENCY"),
        ("bad-policy", "rules[0].match.when: unknown function 'startswith'"),
    ],
)
def test_gunicorn_refuses_what_its_workers_would_refuse_in_json_lines_before_binding(
    redis_url: str, tmp_path: Path, case: str, named: str
) -> None:
    values = {
        "no-redis-url": {},
        "bad-setting": {"REDIS_URL": redis_url, "WORKER_CONCURRENCY": "many"},
        "bad-policy": {
            "REDIS_URL": redis_url,
            "APPROVAL_POLICY": str(
                write(tmp_path, "rules:\n  - name: a\n    match: {tools: [x], when: 'args.p.startswith(\"/\")'}\n")
            ),
        },
    }[case]
    settings = environment(LOG_FORMAT="json", SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="s", **values)
    ran = _run(web_command(free_port()), settings)

    assert ran.returncode == 2, ran.stderr
    lines = _parsed(ran.stdout + ran.stderr, "gunicorn's output")
    refusals = [line for line in lines if line["level"] == "ERROR"]
    assert len(refusals) == 1, refusals
    assert named in refusals[0]["message"]
    assert not any("exception" in line for line in lines)  # no traceback, not even inside a JSON line
    assert not any(line["message"].startswith(("Listening at", "Booting worker")) for line in lines)


@pytest.mark.single_redis  # the app is built against a Redis that answers; the layout is not what is tested
def test_gunicorn_refuses_a_taken_metrics_port_in_one_json_line_naming_it(redis_url: str) -> None:
    with FakeSlack() as slack, socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = bot_settings(slack, redis_url, LOG_FORMAT="json", HOST="127.0.0.1", METRICS_PORT=str(port))
        ran = _run(web_command(free_port()), settings)

    assert ran.returncode == 2, ran.stderr
    lines = _parsed(ran.stdout + ran.stderr, "gunicorn's output")
    refusals = [line for line in lines if line["level"] == "ERROR"]
    assert [line["message"] for line in refusals] == [
        f"cannot start: HOST, METRICS_PORT: cannot listen on 127.0.0.1:{port} ([Errno 98] Address already in use)"
    ]


@pytest.mark.single_redis  # the port is refused before the app is built; the layout is not what is tested
@pytest.mark.parametrize(
    ("log_format", "port_setting"), [("json", True), ("text", False)], ids=["json-PORT", "text-bind"]
)
def test_gunicorn_refuses_its_own_taken_port_in_one_line_naming_it(
    redis_url: str, log_format: str, port_setting: bool
) -> None:
    with FakeSlack() as slack, socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # The Procfile's --bind 0.0.0.0:$PORT, with PORT set as the platform sets it (or the port given by hand).
        named = {"PORT": str(port)} if port_setting else {}
        settings = bot_settings(slack, redis_url, LOG_FORMAT=log_format, **named)
        ran = _run(web_command(port), settings)

    output = ran.stdout + ran.stderr
    assert ran.returncode == 2, output
    said = f"cannot start: {'PORT' if port_setting else '--bind'}: cannot listen on 127.0.0.1:{port}"
    said += " ([Errno 98] Address already in use)"
    if log_format == "json":
        lines = _parsed(output, "gunicorn's output")
        assert [line["message"] for line in lines if line["level"] == "ERROR"] == [said]
        assert not any("exception" in line for line in lines)
    else:
        [refusal] = [line for line in output.splitlines() if "ERROR" in line]
        assert refusal.endswith(said), refusal
    # Not gunicorn's five tries and its own words, exit 1.
    assert "Retrying in 1 second" not in output
    assert "Connection in use" not in output
