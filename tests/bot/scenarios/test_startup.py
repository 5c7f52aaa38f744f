"""Startup as a real process: a setting Redis or Slack cannot use ends with one message naming it (exit 2)."""

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis

from bench.serving import free_port
from state import RedisServer
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.processes import ROOT, bot_environment, run_bot


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def _closed_port() -> int:
    return free_port()  # nothing listens there, nor will meanwhile


def _fails_clearly(args: list[str], *named: str, **values: str) -> str:
    completed = run_bot(args, **values)
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.stderr.strip().splitlines()[-1].startswith("signoff: ")
    for text in named:
        assert text in completed.stderr
    return completed.stderr


def test_a_blank_signing_secret_is_named() -> None:
    _fails_clearly(
        ["serve"],
        "SLACK_SIGNING_SECRET is blank",
        "Basic Information",
        SLACK_BOT_TOKEN="xoxb-1",
        SLACK_SIGNING_SECRET=" ",
    )


@pytest.mark.parametrize("command", [["serve"], ["worker"], ["pending"], ["audit", "export"]])
def test_a_redis_url_that_is_not_a_url_is_named(command: list[str]) -> None:
    said = _fails_clearly(
        command,
        "REDIS_URL must start with redis://",
        SLACK_BOT_TOKEN="xoxb-1",
        SLACK_SIGNING_SECRET="s",
        REDIS_URL="notaurl",
    )
    assert "notaurl" not in said  # a URL's text is never echoed: it may hold a password


@pytest.mark.parametrize("command", [["worker"], ["pending"]])
def test_an_unreachable_redis_is_named(command: list[str]) -> None:
    url = f"redis://:hunter2@127.0.0.1:{_closed_port()}/0"
    said = _fails_clearly(command, "REDIS_URL: cannot use Redis at", SLACK_BOT_TOKEN="xoxb-1", REDIS_URL=url)
    assert "hunter2" not in said


def test_a_token_slack_refuses_is_named(redis_server: RedisServer, slack: FakeSlack) -> None:
    _fails_clearly(
        ["worker"],
        "SLACK_BOT_TOKEN was refused by Slack (auth.test: invalid_auth)",
        "OAuth & Permissions",
        SLACK_BOT_TOKEN="xoxb-revoked",
        SLACK_API_URL=slack.url,
        REDIS_URL=redis_server.url,
    )


def test_an_unreachable_slack_is_named(redis_server: RedisServer) -> None:
    _fails_clearly(
        ["worker"],
        "SLACK_API_URL: cannot reach Slack",
        SLACK_BOT_TOKEN="xoxb-1",
        SLACK_API_URL=f"http://127.0.0.1:{_closed_port()}/api/",
        REDIS_URL=redis_server.url,
    )


@pytest.mark.parametrize("command", [["serve"], ["worker"]])
@pytest.mark.parametrize("token", ["garbage", "xapp-1-A1-1-abc", " xoxb-1"])
def test_a_bot_token_that_is_not_one_is_named(command: list[str], token: str) -> None:
    said = _fails_clearly(
        command,
        "SLACK_BOT_TOKEN must start with xoxb-",
        "OAuth & Permissions",
        SLACK_BOT_TOKEN=token,
        SLACK_SIGNING_SECRET="s",
    )
    assert len(said.strip().splitlines()) == 1
    assert token.strip() not in said  # a token is never echoed


def test_an_unreachable_slack_com_does_not_blame_an_unset_slack_api_url(redis_server: RedisServer) -> None:
    said = _fails_clearly(
        ["worker"],
        "cannot reach slack.com",
        SLACK_BOT_TOKEN="xoxb-1",
        REDIS_URL=redis_server.url,
        # slack.com is not reached from a test: every request goes to a proxy nothing listens on.
        HTTPS_PROXY=f"http://127.0.0.1:{_closed_port()}",
    )
    assert "SLACK_API_URL" not in said


def test_serve_listens_where_host_says(redis_server: RedisServer, slack: FakeSlack) -> None:
    stderr = _fails_clearly(
        ["serve"],
        "HOST, PORT: cannot listen on 192.0.2.1:",
        SLACK_BOT_TOKEN=slack.token,
        SLACK_SIGNING_SECRET="s",
        SLACK_API_URL=slack.url,
        REDIS_URL=redis_server.url,
        HOST="192.0.2.1",  # documentation range: no interface of this machine has it
        PORT=str(_closed_port()),
    )
    # The app was built (it fails only at listening): Bolt's start-up noise about the token is not printed.
    assert "will be unused" not in stderr


def test_the_sandbox_serves_other_machines_only_when_told_and_then_warns() -> None:
    said = _fails_clearly(["sandbox", "--host", "0.0.0.0", "--port", "0"], "act as any user", "add --public")
    assert "listens on 127.0.0.1 only" in said

    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "sandbox", "--host", "0.0.0.0", "--port", "0", "--public"],
        cwd=ROOT,
        env=bot_environment(PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        assert "open http://" in process.stdout.readline()
        warning = [process.stderr.readline() for _ in range(3)]
        assert "WARNING: the sandbox listens on 0.0.0.0" in "".join(warning)
        assert "act as any user" in "".join(warning)
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)


@pytest.mark.parametrize("command", [["sandbox", "--port", "0"], ["demo"]])
@pytest.mark.parametrize("url", ["redis://127.0.0.1:9/0", "http://localhost:6379"])
def test_the_sandbox_and_the_demo_name_an_unusable_redis_url_in_one_message(command: list[str], url: str) -> None:
    ran = run_bot(command, REDIS_URL=url)
    assert ran.returncode == 2
    [line] = ran.stderr.strip().splitlines()
    assert line.startswith("signoff: REDIS_URL")
    assert "Traceback" not in ran.stderr


@pytest.mark.parametrize("command", [["worker"], ["serve"], ["pending"], ["worker-health"]])
@pytest.mark.parametrize(
    "url",
    [
        "redis://:hunter2@127.0.0.1:99999/0",  # a port out of range
        "redis://:hunter2@127.0.0.1:six/0",  # a port that is not a number
        "redis://:hun/ter2@127.0.0.1:6379/0",  # a '/' in the password: urllib reads part of it as the port
        "redis://:hun[ter2@127.0.0.1:6379/0",  # a '[' in the password: urllib reads an IPv6 host
    ],
)
def test_a_redis_url_whose_host_or_port_cannot_be_read_is_named_without_its_password(
    command: list[str], url: str
) -> None:
    said = _fails_clearly(
        command, "REDIS_URL is not a well-formed URL", SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="s", REDIS_URL=url
    )
    assert "hun" not in said


@pytest.mark.parametrize(
    ("command", "variable", "value"),
    [
        (["worker-health"], "WORKER_HEARTBEAT_SECONDS", "often"),
        (["pending"], "REDIS_SHARDS", "0"),
        (["grants", "list"], "REDIS_CLUSTER", "maybe"),
        (["audit", "export", "--since", "2026-11-01"], "REDIS_TIMEOUT_SECONDS", "soon"),
        (["api-key", "list"], "REDIS_RETRY_SECONDS", "-1"),
        (["installations", "rotate"], "REDIS_SHARDS", "many"),
        (["migrate"], "REDIS_CLUSTER", "maybe"),
    ],
)
def test_an_operator_command_names_a_malformed_setting(
    redis_server: RedisServer, command: list[str], variable: str, value: str
) -> None:
    ran = run_bot(command, REDIS_URL=redis_server.url, **{variable: value})
    assert ran.returncode == 2, ran.stderr
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.stderr.startswith("signoff: invalid settings:")
    assert f"\n  {variable}: " in ran.stderr


def test_a_worker_whose_metrics_port_is_taken_names_it_and_does_not_start(
    redis_server: RedisServer, slack: FakeSlack
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        _fails_clearly(
            ["worker"],
            f"HOST, METRICS_PORT: cannot listen on 127.0.0.1:{port}",
            SLACK_BOT_TOKEN=slack.token,
            SLACK_API_URL=slack.url,
            REDIS_URL=redis_server.url,
            HOST="127.0.0.1",
            METRICS_PORT=str(port),
        )


@pytest.mark.parametrize("command", [["worker"], ["serve"]])
@pytest.mark.parametrize(
    ("malformed", "named"),
    [({"REDIS_URL": "notaurl"}, "REDIS_URL must start with redis://"), ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL")],
    ids=["redis-url", "log-level"],
)
def test_a_process_logging_json_refuses_to_start_in_one_json_line(
    command: list[str], malformed: dict[str, str], named: str
) -> None:
    ran = run_bot(command, LOG_FORMAT="json", SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="s", **malformed)
    assert ran.returncode == 2
    [line] = ran.stderr.strip().splitlines()
    refusal = json.loads(line)
    assert refusal["level"] == "ERROR"
    assert named in refusal["message"]
    assert "exception" not in refusal


@pytest.mark.parametrize("command", [["worker-health"], ["grants", "list"]])
def test_an_operator_command_whose_redis_fails_a_command_after_the_start_check_says_so(
    own_redis: RedisServer, command: list[str]
) -> None:
    # A managed Redis whose user may not read sorted sets: the start-up check (PING, the layout) passes, the read fails.
    admin = redis.Redis.from_url(own_redis.url)
    admin.acl_setuser("probe", enabled=True, passwords=["+hunter2"], keys=["~*"], commands=["+@all", "-@sortedset"])
    url = f"redis://probe:hunter2@127.0.0.1:{own_redis.port}/0"
    said = _fails_clearly(command, "REDIS_URL: Redis failed the command (NoPermissionError", REDIS_URL=url)
    assert "hunter2" not in said
