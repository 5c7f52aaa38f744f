"""The MCP server, driven by the ``mcp`` package's own client over stdio and streamable HTTP, through to a
decision clicked in the loopback Slack and back to the waiting tool call."""

import json
import textwrap
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import redis
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from tests.bot.support.api_conformance import assert_documented_requests_only
from tests.bot.support.busy_api import approving_after_a_refusal, busy_bot
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.mcp_servers import http_server, mcp_environment, stdio_server
from tests.bot.support.people import APPROVER, REQUESTER
from tests.bot.support.processes import run_bot

DEPLOY = {"service": "checkout", "version": "1.2.3"}


def test_request_approval_over_stdio_reports_progress_and_returns_the_decision(bot: Bot) -> None:
    reported: list[tuple[float, float | None, str | None]] = []

    async def session() -> Any:
        async with Client(stdio_server(mcp_environment(bot))) as client:
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == {"request_approval", "permission_prompt", "ask_person"}

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                reported.append((progress, total, message))

            return await client.call_tool(
                "request_approval",
                {"tool": "restart_service", "input": DEPLOY, "reason": "release 1.2.3"},
                progress_callback=on_progress,
            )

    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
        result = anyio.run(session)

    assert not result.is_error, result
    answer = result.structured_content
    assert answer is not None
    assert (answer["status"], answer["tool"], answer["input"]) == ("approved", "restart_service", DEPLOY)
    assert answer["decision"]["decided_by"] == APPROVER
    assert answer["requester"] == REQUESTER
    assert reported, "no progress notification while waiting"
    assert reported[0][2] == "waiting for a decision in Slack (policy default)"
    assert reported[0][1] == 3600
    [message] = bot.approval_messages()
    assert "claude-ci" in json.dumps(message["blocks"])  # the API client that asked


def _permission(url: str, tool_input: dict[str, Any], *, tool_use_id: str) -> dict[str, Any]:
    async def session() -> Any:
        async with Client(url) as client:
            arguments = {"tool_name": "Bash", "input": tool_input, "tool_use_id": tool_use_id}
            return await client.call_tool("permission_prompt", arguments)

    result = anyio.run(session)
    assert not result.is_error, result
    [content] = result.content
    return dict(json.loads(content.text))


def test_permission_prompt_over_streamable_http_allows_with_the_input_or_denies_with_the_reason(bot: Bot) -> None:
    command = {"command": "git push origin main", "description": "Push the release"}
    with http_server(mcp_environment(bot)) as url:
        with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
            allowed = _permission(url, command, tool_use_id="toolu_01")
        assert allowed == {"behavior": "allow", "updatedInput": command}

        deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="not on a Friday")  # noqa: E731
        with person_in_slack(bot, deny):
            denied = _permission(url, {"command": "rm -rf build"}, tool_use_id="toolu_02")
        assert denied == {
            "behavior": "deny",
            "message": f"Denied in Slack by {APPROVER}: not on a Friday. Do not retry this call.",
        }
        # Claude Code asking again for the same tool use gets the same answer, and nobody is asked twice.
        assert _permission(url, {"command": "rm -rf build"}, tool_use_id="toolu_02") == denied
    bot.drain()
    assert len(bot.approval_messages()) == 2


def test_an_expired_request_is_a_deny_that_says_it_expired(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        textwrap.dedent("""\
        rules:
          - name: shell
            match: {tools: [Bash]}
            expiry: {after: 10m, outcome: deny}
        """)
    )
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as bot:

        async def session() -> Any:
            async with Client(stdio_server(mcp_environment(bot))) as client:
                arguments = {"tool_name": "Bash", "input": {"command": "make deploy"}, "tool_use_id": "toolu_9"}
                return await client.call_tool("permission_prompt", arguments)

        with person_in_slack(bot, lambda _approval_id: clock.advance(601)):
            result = anyio.run(session)
        assert_documented_requests_only(bot.api)
    [content] = result.content
    assert json.loads(content.text) == {
        "behavior": "deny",
        "message": "The sign-off request expired in Slack without a decision. Do not retry automatically.",
    }


@pytest.mark.parametrize(
    ("environment", "named"),
    [({}, "SIGNOFF_API_URL"), ({"SIGNOFF_API_URL": "slack.example.com"}, "SIGNOFF_API_URL")],
)
def test_the_mcp_command_names_a_missing_or_malformed_setting(environment: dict[str, str], named: str) -> None:
    ran = run_bot(["mcp"], **environment)
    assert ran.returncode == 2
    assert named in ran.stderr


def test_over_http_each_client_acts_with_its_own_key(bot: Bot) -> None:
    environment = mcp_environment(bot)
    del environment["SIGNOFF_API_KEY"]  # the server holds no key: each client brings its own
    own = bot.services.stores.api_keys.create("release-bot")
    assert own is not None

    async def call_with(headers: dict[str, str], arguments: dict[str, Any]) -> Any:
        transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))
        async with Client(transport) as client:
            return await client.call_tool("request_approval", arguments)

    async def call(headers: dict[str, str]) -> Any:
        return await call_with(headers, {"tool": "restart_service", "input": DEPLOY})

    with http_server(environment) as url:
        refused = anyio.run(call, {})
        assert refused.is_error
        assert "no API key" in refused.content[0].text
        with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
            result = anyio.run(call, {"Authorization": f"Bearer {own.key}"})
        wrong = anyio.run(call_with, {"Authorization": f"Bearer {own.key}"}, {"tool": "deploy", "channel": "general"})
    assert result.structured_content["client"] == "release-bot"
    assert result.structured_content["status"] == "approved"
    assert wrong.is_error
    assert "channel: 'general' is not a Slack channel id" in wrong.content[0].text
    # The caller named that channel: the server passed it on as asked, and the API refused it.
    assert bot.api is not None
    [passed_on] = bot.api.invalid_requests
    assert "body: 'general' is not valid" in passed_on
    bot.api.invalid_requests.clear()


def test_a_wait_refused_with_429_is_asked_again_never_a_tool_failure(
    redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    with busy_bot(redis_client) as bot:

        async def session() -> Any:
            async with Client(stdio_server(mcp_environment(bot))) as client:
                return await client.call_tool("request_approval", {"tool": "restart_service", "input": DEPLOY})

        with approving_after_a_refusal(bot, caplog, "claude-ci"):
            result = anyio.run(session)
        assert_documented_requests_only(bot.api)
    assert not result.is_error, result
    assert result.structured_content is not None
    assert (result.structured_content["status"], result.structured_content["decision"]["decided_by"]) == (
        "approved",
        APPROVER,
    )
