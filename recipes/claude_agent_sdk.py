"""Recipe: the Claude Agent SDK's tool-permission callback (``can_use_tool``) decided by people in Slack.

Each tool call the ``claude`` CLI would ask a person about goes to the callback, which asks Signoff's HTTP
API and waits: an approval allows the call with its input, anything else denies it with why (the model reads
the message instead of the tool's output). The answers are the MCP ``permission_prompt`` tool's.

The callback only sees calls that are not already allowed: ``permission_mode="bypassPermissions"`` or an
``allowed_tools`` entry naming a whole tool lets those calls through without asking.
"""

import functools
from dataclasses import replace
from typing import Any

import anyio
from claude_agent_sdk import (
    CanUseTool,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
)

from bot.render.texts import refusals
from recipes.signoff_client import ask_and_wait


def signoff_can_use_tool(
    *, api_url: str, api_key: str, channel: str, run_id: str, timeout_s: float = 3600
) -> CanUseTool:
    """A ``can_use_tool`` callback that asks in ``channel`` and allows only what people approved.

    ``run_id`` makes each call's idempotency key (``<run_id>:<tool use id>``): a retried run asks nothing twice.
    """

    async def can_use_tool(
        tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResult:
        ask = {
            "tool": tool_name,
            "input": tool_input,
            # The CLI's own prompt sentence, when it has one, is what a person at the terminal would have read.
            "reason": context.title or context.decision_reason or "requested by a Claude Agent SDK agent",
            "channel": channel,
            "idempotency_key": f"{run_id}:{context.tool_use_id}",
        }
        wait = functools.partial(ask_and_wait, api_url, api_key, ask, timeout_s=timeout_s)
        try:
            # ask_and_wait blocks for up to timeout_s: off the event loop, which keeps serving the CLI.
            decided = await anyio.to_thread.run_sync(wait, abandon_on_cancel=True)
        except OSError as error:  # unreachable, or the API refused the request: fail closed
            return PermissionResultDeny(message=refusals.could_not_ask(error))
        return permission_result(decided, tool_input)

    return can_use_tool


def permission_result(decided: dict[str, Any], tool_input: dict[str, Any]) -> PermissionResult:
    """Allow only an approval (with the input as asked); deny anything else, telling the model why."""
    if decided["status"] == "approved":
        return PermissionResultAllow(updated_input=tool_input)
    return PermissionResultDeny(message=refusals.not_approved(decided))


async def run_with_signoff(
    prompt: str, options: ClaudeAgentOptions, *, api_url: str, api_key: str, channel: str, run_id: str
) -> ResultMessage:
    """Run one prompt with ``options``; every tool call that needs permission is decided in Slack first.

    Returns the run's result (``result`` is the final answer). ``can_use_tool`` needs the SDK's streaming
    mode, which ``ClaudeSDKClient`` is.
    """
    callback = signoff_can_use_tool(api_url=api_url, api_key=api_key, channel=channel, run_id=run_id)
    async with ClaudeSDKClient(replace(options, can_use_tool=callback)) as client:
        await client.query(prompt)
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                return message
    raise RuntimeError("the Claude Code CLI ended the run without a result")
