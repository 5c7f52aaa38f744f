"""The real entry points: ``python -m bot`` and the Procfile's gunicorn line, as processes."""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from bench.serving import free_port, stop, wait_healthy
from bot.cli.main import COMMANDS
from bot.store import keys
from bot.store.audit import Audit, read_export
from loopback_slack import slack_requests
from loopback_slack.slack_requests import SignedPoster
from state import RedisServer
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import SIGNING_SECRET, demo_factory, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER
from tests.bot.support.processes import ROOT
from tests.bot.support.processes import bot_environment as _environment
from tests.bot.support.processes import run_bot as _run
from tests.bot.support.tampering import TamperingPoster
from tests.bot.support.web_processes import web_command


@pytest.mark.parametrize(
    ("args", "values", "named"),
    [
        (["serve"], {}, "SLACK_BOT_TOKEN is not set"),
        (["serve"], {"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET is not set"),
        (["socket"], {"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_APP_TOKEN is not set"),
        (
            ["socket"],
            {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-wrong"},
            "SLACK_APP_TOKEN must start with xapp-",
        ),
        (["worker"], {"SLACK_BOT_TOKEN": "xoxb-1", "PORT": "99999"}, "PORT"),
        (
            ["worker"],
            {"SLACK_BOT_TOKEN": "xoxb-1", "AGENT_FACTORY": "nope"},
            "AGENT_FACTORY must look like module:callable",
        ),
        (["worker"], {"SLACK_BOT_TOKEN": "xoxb-1", "AGENT_FACTORY": "agent.demo:missing"}, "cannot be imported"),
        (["worker"], {"SLACK_BOT_TOKEN": "xoxb-1", "JOB_CLAIM_SECONDS": "0"}, "JOB_CLAIM_SECONDS"),
        (["worker"], {"SLACK_BOT_TOKEN": "xoxb-1", "JOB_RETRY_SECONDS": "soon"}, "JOB_RETRY_SECONDS"),
        (["worker"], {"SLACK_BOT_TOKEN": "xoxb-1", "OUTBOX_LEASE_SECONDS": "-5"}, "OUTBOX_LEASE_SECONDS"),
        (["worker"], {"SLACK_BOT_TOKEN": "xoxb-1", "WORKER_CONCURRENCY": "0"}, "WORKER_CONCURRENCY"),
        (["worker"], {"SLACK_BOT_TOKEN": "xoxb-1", "WORKER_CONCURRENCY": "many"}, "WORKER_CONCURRENCY"),
        (["worker"], {"SLACK_BOT_TOKEN": "xoxb-1", "REDIS_RETRY_SECONDS": "600"}, "REDIS_RETRY_SECONDS"),
        (["serve"], {"SLACK_BOT_TOKEN": "xoxb-1", "API_MAX_WAITS": "0"}, "API_MAX_WAITS"),
        (["serve"], {"SLACK_BOT_TOKEN": "xoxb-1", "API_MAX_WAITS": "half"}, "API_MAX_WAITS"),
    ],
)
def test_bad_settings_end_with_one_clear_message_and_status_2(
    args: list[str], values: dict[str, str], named: str
) -> None:
    completed = _run(args, **values)
    assert completed.returncode == 2, completed.stderr
    assert named in completed.stderr
    assert "Traceback" not in completed.stderr


def test_a_bad_policy_file_names_the_field_and_line(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text("rules:\n  - name: x\n    match: {tools: [restart_service]}\n    approvers: {users: [bob]}\n")
    completed = _run(["worker"], SLACK_BOT_TOKEN="xoxb-1", APPROVAL_POLICY=str(policy))
    assert completed.returncode == 2
    assert "line 4" in completed.stderr
    assert "rules[0].approvers.users[0]" in completed.stderr


def test_no_credentials_runs_the_terminal_walkthrough() -> None:
    completed = _run(["demo"])
    assert completed.returncode == 0, completed.stderr
    assert "waiting for approval" in completed.stdout
    assert "checkout: 3 replicas restarted" in completed.stdout
    assert "Not run: <@U_DEMO> denied it: release freeze until 18:00" in completed.stdout
    assert "Do not retry" not in completed.stdout


def _served_by(slack: FakeSlack, **values: str) -> dict[str, str]:
    """The environment of a bot answering signed requests for ``slack``, with ``values``."""
    return _environment(
        SLACK_BOT_TOKEN=slack.token, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=slack.url, **values
    )


def _wait_healthy(port: int, process: subprocess.Popen[bytes]) -> None:
    """``wait_healthy``, failing with the process's stderr when it ended before it served."""
    try:
        wait_healthy(port, [process])
    except RuntimeError:
        if process.poll() is not None and process.stderr:
            pytest.fail(process.stderr.read().decode())
        raise


@contextmanager
def _process(command: list[str], environment: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(command, cwd=ROOT, env=environment, stderr=subprocess.PIPE)
    try:
        yield process
    finally:
        stop([process])


def test_serve_on_embedded_redis_handles_a_request_end_to_end_and_stops_on_sigterm() -> None:
    port = free_port()
    with FakeSlack() as slack:
        environment = _served_by(slack, PORT=str(port))
        with _process([sys.executable, "-m", "bot", "serve"], environment) as process:
            _wait_healthy(port, process)
            event = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
            with SignedPoster(f"http://127.0.0.1:{port}/", SIGNING_SECRET) as poster:
                assert poster.post_event(event).status == 200
            [posted] = slack.wait_for("chat.postMessage", timeout=20)
            assert "restart_service" in posted.args["text"]

            process.send_signal(signal.SIGTERM)
            assert process.wait(20) == 0


def test_the_procfile_web_command_serves_under_gunicorn(redis_server: RedisServer) -> None:
    port = free_port()
    with FakeSlack() as slack:
        environment = _served_by(
            slack, REDIS_URL=redis_server.url, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
        )
        with _process(web_command(port), environment) as process:
            _wait_healthy(port, process)
            event = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
            with TamperingPoster(f"http://127.0.0.1:{port}/", SIGNING_SECRET) as poster:
                assert poster.post_event(event).status == 200
                assert poster.post_event(event, forge=True).status == 401


def test_audit_export_writes_the_trail_as_jsonl_and_csv(redis_server: RedisServer, tmp_path: Path) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    Audit(client).record("decision", session_id="T:C:1.2", actor="U0A", decision="approve")
    for fmt in ("jsonl", "csv"):
        output = tmp_path / f"audit.{fmt}"
        completed = _run(
            ["audit", "export", "--since", "2020-01-01", "--format", fmt, "--output", str(output)],
            REDIS_URL=redis_server.url,
        )
        assert completed.returncode == 0, completed.stderr
        assert "exported 1 audit events" in completed.stderr
        [entry] = read_export(output.read_text(), fmt)
        assert (entry.event, entry.actor, entry.details) == ("decision", "U0A", {"decision": "approve"})


def test_audit_export_needs_redis_url_and_a_valid_since() -> None:
    assert "REDIS_URL is not set" in _run(["audit", "export"]).stderr
    bad = _run(["audit", "export", "--since", "last tuesday"], REDIS_URL="redis://127.0.0.1:1/0")
    assert bad.returncode == 2
    assert "--since must be an ISO date" in bad.stderr


def test_a_process_started_with_another_shard_count_than_the_data_ends_naming_redis_shards(
    redis_url: str, redis_client: redis.Redis
) -> None:
    assert _run(["pending"], REDIS_URL=redis_url, REDIS_SHARDS="3").returncode == 0  # records 3

    other = _run(["pending"], REDIS_URL=redis_url, REDIS_SHARDS="5")

    assert other.returncode == 2
    assert "Traceback" not in other.stderr
    assert "REDIS_SHARDS: this Redis holds Signoff's data spread over 3 shards" in other.stderr
    assert redis_client.get(keys.SHARD_LAYOUT) == b"3"  # the refused process changed nothing
    assert _run(["pending"], REDIS_URL=redis_url, REDIS_SHARDS="3").returncode == 0


def test_pending_lists_waiting_sessions_and_resume_requeues_a_given_up_one(
    redis_url: str, redis_client: redis.Redis
) -> None:
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        bot.mention("restart checkout")
        bot.drain()
        approval_id = bot.approval_id()

        listed = _run(["pending"], REDIS_URL=redis_url)
        assert listed.returncode == 0, listed.stderr
        assert approval_id in listed.stdout
        assert "restart_service" in listed.stdout
        assert "open" in listed.stdout
        session_id = listed.stdout.splitlines()[0]

        refused = _run(["resume", session_id], REDIS_URL=redis_url)
        assert refused.returncode == 1
        assert "still open" in refused.stderr

        bot.click("signoff_approve", approval_id, user=APPROVER)
        bot.services.stores.jobs.ack = lambda job: None  # type: ignore[method-assign]
        runner = bot.services.runner
        runner._resume = lambda session_id, version: None  # type: ignore[method-assign]  # given up, say
        bot.drain()
        jobs = keys.jobs(keys.shard_of(session_id))
        bot.services.stores.redis.xtrim(jobs, maxlen=0)

        queued = _run(["resume", session_id], REDIS_URL=redis_url)
        assert queued.returncode == 0, queued.stderr
        assert bot.services.stores.redis.xlen(jobs) == 1


def test_help_lists_every_command_with_one_line_each_and_no_markup() -> None:
    for asked in (["help"], ["--help"], ["-h"]):
        ran = _run(asked)
        assert ran.returncode == 0, ran.stderr
        assert "`" not in ran.stdout
        for name, text in COMMANDS.items():
            assert f"  {name.ljust(max(map(len, COMMANDS)))}  {text}" in ran.stdout


@pytest.mark.parametrize("command", ["serve", "socket", "worker", "sandbox", "demo", "pending", "resume", "audit",
                                     "migrate", "api-key", "grants", "policy", "mcp", "worker-health"])  # fmt: skip
def test_every_command_has_its_own_help(command: str) -> None:
    ran = _run([command, "--help"])
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(f"usage: python -m bot {command}")
    assert "Traceback" not in ran.stderr
