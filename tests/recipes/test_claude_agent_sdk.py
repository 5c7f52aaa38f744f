"""The Claude Agent SDK recipe with the real SDK and its bundled ``claude`` CLI, against a scripted stand-in for
the Messages API on loopback (no network): the model calls an in-process tool, the CLI asks ``can_use_tool``,
the sign-off is asked through the HTTP API and decided in the loopback Slack, and the tool runs, or the model
is told why not."""

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, create_sdk_mcp_server, tool

from bot.mcp.server import permission_answer
from bot.render import action_ids as ids
from recipes.claude_agent_sdk import permission_result, run_with_signoff
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot
from tests.bot.support.messages_api import MessagesApi, ToolCall, cli_environment, serving
from tests.bot.support.people import APPROVER, CHANNEL

TOOL = "mcp__ops__restart_service"  # the CLI's name for the tool restart_service of the SDK server "ops"


@pytest.fixture
def messages_api() -> Iterator[MessagesApi]:
    """The scripted model: it calls the tool until it has its result, then says "done"."""
    with serving(ToolCall(TOOL, {"service": "checkout"})) as api:
        yield api


def _options(messages_api: MessagesApi, home: Path, ran: list[str]) -> ClaudeAgentOptions:
    @tool("restart_service", "Restart every replica of a service.", {"service": str})
    async def restart_service(args: dict[str, Any]) -> dict[str, Any]:
        ran.append(args["service"])
        return {"content": [{"type": "text", "text": f"{args['service']}: restarted"}]}

    return ClaudeAgentOptions(
        tools=[],  # no built-in tools: the scripted model can only call ours (and no tool search defers it)
        mcp_servers={"ops": create_sdk_mcp_server("ops", tools=[restart_service])},
        cwd=home,
        env=cli_environment(messages_api, home),
    )


def _run(options: ClaudeAgentOptions, bot: Bot, api_key: str, run_id: str) -> ResultMessage:
    run = run_with_signoff(
        "restart checkout", options, api_url=bot.url, api_key=api_key, channel=CHANNEL, run_id=run_id
    )
    return asyncio.run(asyncio.wait_for(run, 120))  # a CLI that hangs fails the test instead of the job


def test_an_approved_call_runs_after_the_click(
    bot: Bot, api_key: str, messages_api: MessagesApi, tmp_path: Path
) -> None:
    ran: list[str] = []
    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
        result = _run(_options(messages_api, tmp_path, ran), bot, api_key, "r1")
    assert ran == ["checkout"]
    assert result.result == "done"
    [message] = bot.approval_messages()
    assert "restart_service" in message["text"]
    [told] = messages_api.tool_results()
    assert told["content"] == [{"type": "text", "text": "checkout: restarted"}]
    assert not told.get("is_error")


def test_a_denied_call_never_runs_and_the_model_is_told_why(
    bot: Bot, api_key: str, messages_api: MessagesApi, tmp_path: Path
) -> None:
    ran: list[str] = []
    deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="peak traffic")  # noqa: E731
    with person_in_slack(bot, deny):
        result = _run(_options(messages_api, tmp_path, ran), bot, api_key, "r2")
    assert ran == []
    assert result.result == "done"
    [told] = messages_api.tool_results()
    assert told["content"] == f"Denied in Slack by {APPROVER}: peak traffic. Do not retry this call."
    assert told["is_error"] is True


@pytest.mark.parametrize(
    "decided",
    [
        {"status": "approved", "decision": {"decided_by": APPROVER}},
        {"status": "denied", "decision": {"decided_by": APPROVER, "reason": "peak traffic"}},
        {"status": "denied", "decision": {}},
        {"status": "expired"},
        {"status": "cancelled", "decision": {"reason": "the run was stopped"}},
        {"status": "pending"},
    ],
)
def test_the_callback_answers_as_the_mcp_permission_prompt_does(decided: dict[str, Any]) -> None:
    tool_input = {"service": "checkout"}
    answer = permission_answer(decided, tool_input)
    result = permission_result(decided, tool_input)
    assert result.behavior == answer["behavior"]
    if answer["behavior"] == "allow":
        assert getattr(result, "updated_input", None) == answer["updatedInput"]
    else:
        assert getattr(result, "message", None) == answer["message"]
