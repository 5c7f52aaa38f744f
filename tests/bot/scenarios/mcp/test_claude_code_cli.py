"""Claude Code's own CLI (the one the ``claude-agent-sdk`` wheel bundles), run as the README says, with every
permission prompt decided in the loopback Slack through ``python -m bot mcp`` (over stdio and over
streamable HTTP). The model is a scripted stand-in for the Messages API on loopback; the Bash tool is the
CLI's own and really runs."""

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest

from bot.mcp.server import PERMISSION_TOOL, SERVER_NAME
from bot.render import action_ids as ids
from bot.render import blocks
from tests.bot.support.choices import click_option, send_chosen
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot
from tests.bot.support.mcp_servers import http_server, mcp_environment
from tests.bot.support.messages_api import MessagesApi, ToolCall, cli_environment, result_text, serving
from tests.bot.support.people import APPROVER, REQUESTER
from tests.bot.support.processes import ROOT, bot_environment

CLI = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
PROMPT_TOOL = f"mcp__{SERVER_NAME}__{PERMISSION_TOOL}"


NEGOTIATIONS = ("auto", "legacy")
"""The CLI's ``MCP_PROTOCOL_NEGOTIATION``: ``auto`` probes for the newest era first, ``legacy`` forces the
``initialize`` handshake; each settles on a protocol version, which the test reads back from the CLI's log."""


def _bash(marker: Path, tool_use_id: str) -> ToolCall:
    # A redirect is a write: the CLI never auto-allows it, so it must ask the permission prompt tool.
    return ToolCall("Bash", {"command": f"echo ran > {marker}", "description": "Leave a marker"}, tool_use_id)


@contextmanager
def _mcp_config(bot: Bot, transport: str, home: Path) -> Iterator[Path]:
    """``signoff-mcp.json`` as the README writes it, for stdio or for a server already serving HTTP."""
    environment = mcp_environment(bot)
    config = home / "signoff-mcp.json"
    if transport == "stdio":
        server = {"command": sys.executable, "args": ["-m", "bot", "mcp"], "cwd": str(ROOT), "env": environment}
        config.write_text(json.dumps({"mcpServers": {SERVER_NAME: server}}))
        yield config
        return
    key = environment.pop("SIGNOFF_API_KEY")
    with http_server(environment) as url:
        server = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {key}"}}
        config.write_text(json.dumps({"mcpServers": {SERVER_NAME: server}}))
        yield config


def _claude(api: MessagesApi, config: Path, home: Path, negotiation: str) -> tuple[dict[str, Any], str]:
    """One ``claude -p`` run as the README gives it; its JSON result and the protocol version it negotiated."""
    log = home / f"claude-{len(api.requests)}.log"
    command = [str(CLI), "-p", "leave a marker", "--output-format", "json", "--mcp-config", str(config)]
    command += ["--strict-mcp-config", "--permission-prompt-tool", PROMPT_TOOL, "--debug-file", str(log)]
    ran = subprocess.run(
        command,
        cwd=home,
        env=bot_environment(**cli_environment(api, home), MCP_PROTOCOL_NEGOTIATION=negotiation),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert ran.returncode == 0, (ran.stdout, ran.stderr)
    versions = set(re.findall(r'"negotiatedProtocolVersion":"([^"]+)"', log.read_text()))
    assert len(versions) == 1, f"the CLI's log names no single negotiated version: {versions}"
    return dict(json.loads(ran.stdout)), versions.pop()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / ".claude").mkdir()
    return tmp_path


@pytest.mark.single_redis
@pytest.mark.parametrize("negotiation", NEGOTIATIONS)
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_cli_runs_an_approved_bash_call_and_never_a_denied_one(
    bot: Bot, home: Path, transport: str, negotiation: str
) -> None:
    approved, denied = home / "approved.txt", home / "denied.txt"
    with serving(_bash(approved, "toolu_approved")) as api, _mcp_config(bot, transport, home) as config:
        with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
            result, version = _claude(api, config, home, negotiation)
        [told] = api.tool_results()
        assert result["result"] == "done", result
        assert not told.get("is_error"), told
        assert approved.read_text() == "ran\n"

        api.call = _bash(denied, "toolu_denied")
        deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="not on a Friday")  # noqa: E731
        with person_in_slack(bot, deny):
            _claude(api, config, home, negotiation)
        [told] = api.tool_results()
        assert told["is_error"] is True
        assert "Denied in Slack by U0APPROVER: not on a Friday. Do not retry this call." in result_text(told)
        assert not denied.exists()

        # Claude Code asking again about the same tool use (a retried CI job): the same answer, nobody asked.
        with person_in_slack(bot, lambda _approval_id: None) as asked:
            _, again = _claude(api, config, home, negotiation)
        assert asked == []
        [told_again] = api.tool_results()
        assert result_text(told_again) == result_text(told)
        assert not denied.exists()
    bot.drain()
    first, second = bot.approval_messages()
    assert "Bash" in first["text"]
    assert os.fspath(approved) in json.dumps(first["blocks"])
    assert os.fspath(denied) in json.dumps(second["blocks"])
    assert version == again == EXPECTED_VERSION[negotiation]


EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}
"""What the bundled CLI 2.1.x settles on with ``python -m bot mcp`` (the newest each era of the ``mcp``
package offers): a change here is a new protocol to prove, not a number to update blindly."""


def _edit_command(bot: Bot, approval_id: str, command: str) -> None:
    """The approver edits the call's command in Slack and saves it (which approves it)."""
    view = bot.open_edit(approval_id, user=APPROVER)
    assert bot.submit_edit(view, user=APPROVER, changes={"command": command}).status == 200


@pytest.mark.single_redis
def test_the_cli_runs_the_command_as_an_approver_edited_it(bot: Bot, home: Path) -> None:
    asked, edited = home / "asked.txt", home / "edited.txt"
    with serving(_bash(asked, "toolu_edited")) as api, _mcp_config(bot, "stdio", home) as config:
        with person_in_slack(bot, lambda approval_id: _edit_command(bot, approval_id, f"echo edited > {edited}")):
            result, _version = _claude(api, config, home, "auto")
        [told] = api.tool_results()
    assert result["result"] == "done", result
    assert not told.get("is_error"), told
    assert edited.read_text() == "edited\n"  # the CLI's own Bash ran the approver's command
    assert not asked.exists()  # and never the one the model asked for
    bot.drain()
    [message] = bot.approval_messages()
    assert f'+ command: \\"echo edited &gt; {edited}\\"' in json.dumps(message["blocks"])


ASKED = {
    "questions": [
        {
            "question": "Which region?",
            "header": "Region",
            "options": [{"label": "eu-west-1", "description": "Ireland"}, {"label": "us-east-1", "description": "US"}],
            "multiSelect": False,
        },
        {
            "question": "Which checks?",
            "header": "Checks",
            "options": [
                {"label": "lint", "description": "ruff"},
                {"label": 'Say "hi", then go', "description": "a greeting"},
                {"label": "types", "description": "mypy"},
            ],
            "multiSelect": True,
        },
    ]
}


@pytest.mark.single_redis
def test_the_model_reads_the_answers_a_person_gave_in_slack_to_ask_user_question(bot: Bot, home: Path) -> None:
    def answer(approval_id: str) -> None:
        message = next(m for m in bot.approval_messages() if blocks.approval_id_shown(m) == approval_id)
        if "Which region?" in json.dumps(message["blocks"]):
            assert click_option(bot, message, 1, user=REQUESTER).status == 200
        else:
            assert send_chosen(bot, message, ["1", "0"], user=REQUESTER).status == 200

    with serving(ToolCall("AskUserQuestion", ASKED, "toolu_ask")) as api, _mcp_config(bot, "stdio", home) as config:
        with person_in_slack(bot, answer) as answered:
            result, _version = _claude(api, config, home, "auto")
        [told] = api.tool_results()
    assert len(answered) == 2
    assert result["result"] == "done", result
    assert not told.get("is_error"), told
    # The CLI's own words when every answer is one of the options offered: the labels reached the model as labels.
    assert result_text(told) == (
        'Your questions have been answered: "Which region?"="us-east-1", '
        '"Which checks?"="lint, "Say \\"hi\\", then go"". You can now continue with these answers in mind.'
    )


def _open_other(bot: Bot, approval_id: str) -> dict[str, Any]:
    opened = len(bot.slack.calls("views.open"))
    assert bot.click(ids.ANSWER_OTHER_ACTION, approval_id, user=REQUESTER).status == 200
    return dict(bot.slack.wait_for("views.open", count=opened + 1)[-1].response["view"])


@pytest.mark.single_redis
def test_a_person_may_answer_ask_user_question_in_their_own_words_and_the_model_reads_them(
    bot: Bot, home: Path
) -> None:
    words = 'ap-south-1, "closest" to the new customers'

    def answer(approval_id: str) -> None:
        view = _open_other(bot, approval_id)  # Other…, beside the options: the words form
        assert bot.submit_answer(approval_id, user=REQUESTER, answer=words, view=view).status == 200

    asked = {"questions": [ASKED["questions"][0]]}
    with serving(ToolCall("AskUserQuestion", asked, "toolu_other")) as api, _mcp_config(bot, "stdio", home) as config:
        with person_in_slack(bot, answer) as answered:
            result, _version = _claude(api, config, home, "auto")
        [told] = api.tool_results()
    assert len(answered) == 1
    assert result["result"] == "done", result
    assert not told.get("is_error"), told
    # The CLI's own words for an answer that is none of the labels (what its dialog's "Other" gives): the model is
    # told what the person wrote, and to read it carefully.
    assert result_text(told) == (
        f'The user answered: "Which region?"="{words}". Read the answers carefully \u2014 they may request '
        "clarification, changes, or that you not proceed \u2014 and follow what they actually say."
    )
