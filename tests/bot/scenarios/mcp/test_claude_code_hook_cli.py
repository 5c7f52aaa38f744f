"""Claude Code's own CLI (the one the ``claude-agent-sdk`` wheel bundles) with the project ``.claude/settings.json``
docs/mcp.md gives: its ``PreToolUse`` http hook calls ``POST /v1/hooks/claude-code`` with the API key from the
environment, and every Bash call waits for a decision in the loopback Slack. The model is a scripted stand-in for
the Messages API on loopback; the Bash tool is the CLI's own and really runs (or does not). The managed settings
docs/mcp.md gives are run as written there too, through ``--settings``."""

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest

from bot.render import action_ids as ids
from tests.bot.support.api_client import api_caller
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot, is_decided
from tests.bot.support.messages_api import MessagesApi, ToolCall, cli_environment, result_text, serving
from tests.bot.support.people import APPROVER, CHANNEL
from tests.bot.support.processes import ROOT, bot_environment

CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


def _settings(bot: Bot, *, wait: int) -> dict[str, Any]:
    """The project settings of docs/mcp.md, pointed at the test's bot (the key comes from the environment)."""
    hook = {
        "type": "http",
        "url": f"{bot.url.rstrip('/')}/v1/hooks/claude-code?channel={CHANNEL}&wait={wait}",
        "timeout": wait + 10,
        "headers": {"Authorization": "Bearer $SIGNOFF_API_KEY"},
        "allowedEnvVars": ["SIGNOFF_API_KEY"],
    }
    return {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}


@pytest.fixture
def project(bot: Bot, tmp_path: Path) -> Path:
    """A project whose ``.claude/settings.json`` asks Slack before every Bash call (held 60 s at most)."""
    (tmp_path / "home" / ".claude").mkdir(parents=True)
    (tmp_path / "project" / ".claude").mkdir(parents=True)
    (tmp_path / "project" / ".claude" / "settings.json").write_text(json.dumps(_settings(bot, wait=60)))
    return tmp_path / "project"


def _claude(bot: Bot, api: MessagesApi, project: Path, *options: str) -> dict[str, Any]:
    """``claude -p`` in the project (with ``options``), its API key in ``SIGNOFF_API_KEY``; its JSON result."""
    with api_caller(bot.services, bot.url, name=f"claude-code-{len(api.requests)}") as caller:
        key = caller.http.headers["Authorization"].removeprefix("Bearer ")
        ran = subprocess.run(
            [str(CLI), "-p", "run it", "--output-format", "json", *options],
            cwd=project,
            env=bot_environment(**cli_environment(api, project.parent / "home"), SIGNOFF_API_KEY=key),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    assert ran.returncode == 0, (ran.stdout, ran.stderr)
    return dict(json.loads(ran.stdout))


def _bash(command: str, tool_use_id: str) -> ToolCall:
    return ToolCall("Bash", {"command": command, "description": "Leave a marker"}, tool_use_id)


@pytest.mark.single_redis
def test_an_approved_bash_call_runs_and_a_denied_one_does_not_and_the_model_is_told_why(
    bot: Bot, project: Path
) -> None:
    approved, denied = project / "approved.txt", project / "denied.txt"
    with serving(_bash(f"echo approved-output; echo ran > {approved}", "toolu_hook_approved")) as api:
        with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
            result = _claude(bot, api, project)
        [told] = api.tool_results()
        session = result["session_id"]
        assert result["result"] == "done", result
        assert not told.get("is_error"), told
        assert "approved-output" in result_text(told)  # the command ran, and its output reached the model
        assert approved.read_text() == "ran\n"

        api.call = _bash(f"echo ran > {denied}", "toolu_hook_denied")
        deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="not on a Friday")  # noqa: E731
        with person_in_slack(bot, deny):
            result = _claude(bot, api, project)
        [told] = api.tool_results()
    assert told["is_error"] is True
    assert "Denied in Slack by U0APPROVER: not on a Friday. Do not retry this call." in result_text(told)
    assert not denied.exists()
    assert [denial["tool_use_id"] for denial in result["permission_denials"]] == ["toolu_hook_denied"]
    bot.drain()
    first, second = bot.approval_messages()
    assert f"Claude Code session {session} in {project}" in json.dumps(first["blocks"])
    assert str(denied) in json.dumps(second["blocks"])


def _managed_snippet(bot: Bot, *, wait: int) -> str:
    """docs/mcp.md's managed settings, as written there, pointed at the test's bot and its channel."""
    snippets = re.findall(r"```json\n(.*?)```", (ROOT / "docs" / "mcp.md").read_text(), re.DOTALL)
    [managed] = [str(snippet) for snippet in snippets if "allowManagedHooksOnly" in snippet]
    return (
        managed.replace("https://signoff.example.com", bot.url.rstrip("/"))
        .replace("C0DEPLOYS", CHANNEL)
        .replace("wait=290", f"wait={wait}")
    )


@pytest.mark.single_redis
def test_nobody_deciding_within_the_wait_denies_and_withdraws_the_request(bot: Bot, project: Path) -> None:
    # The managed settings of docs/mcp.md, given with --settings: the CLI reads a managed file only from
    # /etc/claude-code (no setting or variable of this build points it elsewhere), which a test may not write.
    marker = project / "late.txt"
    (project / ".claude" / "settings.json").write_text("{}")  # the hook comes from the documented snippet alone
    managed = project.parent / "managed-settings.json"
    managed.write_text(_managed_snippet(bot, wait=2))
    with serving(_bash(f"echo ran > {marker}", "toolu_hook_late")) as api:
        with person_in_slack(bot, lambda _approval_id: None):
            _claude(bot, api, project, "--settings", str(managed))
        [told] = api.tool_results()
    assert told["is_error"] is True
    assert "Nobody decided in Slack within 2 s; the sign-off request was withdrawn." in result_text(told)
    assert not marker.exists()
    bot.drain()
    [message] = bot.approval_messages()
    assert is_decided(message)
    assert "Claude Code stopped waiting after 2 s" in json.dumps(message["blocks"])
