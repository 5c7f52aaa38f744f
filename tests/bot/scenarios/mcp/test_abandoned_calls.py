"""A tool call its MCP client gives up on (Claude Code's tool timeout, Esc, a cancelled run): nobody waits for the
decision any more, so the request is withdrawn in Slack, not left with live buttons that would decide nothing."""

import time
from typing import Any

import anyio
from mcp import Client

from bot.domain.api_requests import request_id_for
from tests.bot.scenarios.mcp.test_questions import ASK_USER_QUESTION
from tests.bot.support.api_client import ApiCaller
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot, is_decided
from tests.bot.support.mcp_servers import mcp_environment, stdio_server


def _abandoned(bot: Bot, environment: dict[str, str], tool: str, arguments: dict[str, Any], *, posted: int = 1) -> None:
    """Call ``tool`` over stdio and cancel the call once its ``posted`` requests are in Slack (the client says so)."""

    async def session() -> None:
        async with Client(stdio_server(environment)) as client:
            with anyio.move_on_after(60) as waiting:
                async with anyio.create_task_group() as calls:
                    calls.start_soon(client.call_tool, tool, arguments)
                    while len(bot.approval_messages()) < posted:
                        await anyio.sleep(0.05)
                    calls.cancel_scope.cancel()  # the client abandons the call: notifications/cancelled
            assert not waiting.cancelled_caught, "the request was never posted"
            deadline = time.monotonic() + 10
            while not all(is_decided(message) for message in bot.approval_messages()):
                assert time.monotonic() < deadline, "the abandoned request kept its buttons"
                await anyio.sleep(0.1)

    with person_in_slack(bot, lambda _approval_id: None):  # the worker posts; nobody decides
        anyio.run(session)


def test_a_permission_prompt_the_client_abandons_is_withdrawn_in_slack(bot: Bot) -> None:
    environment = mcp_environment(bot)
    arguments = {"tool_name": "Bash", "input": {"command": "make deploy"}, "tool_use_id": "toolu_abandoned"}
    _abandoned(bot, environment, "permission_prompt", arguments)
    api = ApiCaller(bot.url, environment["SIGNOFF_API_KEY"])
    try:
        shown = api.get(request_id_for("claude-ci", "toolu_abandoned")).json()
    finally:
        api.close()
    assert shown["status"] == "cancelled"
    assert shown["decision"]["decided_by"] is None


def test_a_request_approval_the_client_abandons_is_withdrawn_in_slack(bot: Bot) -> None:
    arguments = {"tool": "restart_service", "input": {"service": "checkout"}, "idempotency_key": "abandoned-1"}
    _abandoned(bot, mcp_environment(bot), "request_approval", arguments)


def test_claude_codes_questions_the_client_abandons_are_all_withdrawn(bot: Bot) -> None:
    environment = mcp_environment(bot)
    arguments = {"tool_name": "AskUserQuestion", "input": ASK_USER_QUESTION, "tool_use_id": "toolu_asked"}
    _abandoned(bot, environment, "permission_prompt", arguments, posted=2)
    api = ApiCaller(bot.url, environment["SIGNOFF_API_KEY"])
    try:
        shown = [api.get_question(request_id_for("claude-ci", f"toolu_asked:{index}", "question")) for index in (0, 1)]
    finally:
        api.close()
    assert [question.json()["status"] for question in shown] == ["cancelled", "cancelled"]
