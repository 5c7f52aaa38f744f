"""The MCP server: ``python -m bot mcp`` over stdio, or ``--http`` (streamable HTTP, at ``/mcp``).

Three tools, each ending in the same Slack message as any other request (the server is a client of
the HTTP API, so the policy, escalation, expiry, quorum and audit are the API's):

- ``request_approval``: ask for a sign-off of a tool call and wait for the decision, with a progress
  notification while it waits; returns the request as the API shows it (``status``, ``decision``).
- ``permission_prompt``: Claude Code's ``--permission-prompt-tool`` contract. Input ``tool_name``,
  ``input``, ``tool_use_id``; output a JSON text, ``{"behavior": "allow", "updatedInput": ...}`` or
  ``{"behavior": "deny", "message": ...}``. It fails closed: anything but an approval is a deny.
  Claude Code's ``AskUserQuestion`` is asked as questions instead (``bot.mcp.claude_questions``).
- ``ask_person``: ask a person a question and wait for the answer (``bot.mcp.ask_person``).

Every tool waits in ``bot.mcp.long_poll``: across web restarts and 429s, withdrawing at the deadline.
"""

import json
from collections.abc import Callable
from typing import Annotated, Any, Final

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from agent.approval import input_digest
from bot.mcp.api_client import ApiError, SignoffApi
from bot.mcp.ask_person import add_ask_person
from bot.mcp.claude_questions import ASK_USER_QUESTION, answer_questions
from bot.mcp.config import McpSettings
from bot.mcp.long_poll import LongPoll
from bot.render.texts import asked_person, refusals

SERVER_NAME: Final = "signoff"
PERMISSION_TOOL: Final = "permission_prompt"


def build_server(settings: McpSettings, *, api_for: Callable[[Context], SignoffApi] | None = None) -> MCPServer:
    """The server and its tools; ``api_for`` picks the API client of a call (default: from the settings)."""
    server: MCPServer = MCPServer(
        SERVER_NAME,
        instructions="Ask people in Slack to sign off a tool call before running it, or to answer a question; wait"
        " for their decision or answer.",
    )
    client_of = api_for or (lambda ctx: _api_of(settings, ctx))
    add_ask_person(server, settings, client_of)

    @server.tool(name="request_approval")
    async def request_approval(
        tool: Annotated[str, Field(description="the tool to run (policy rules match it)")],
        ctx: Context,
        *,
        input: Annotated[dict[str, Any] | None, Field(description="its arguments")] = None,
        reason: Annotated[str | None, Field(description="why it should run, shown to the approvers")] = None,
        channel: Annotated[str | None, Field(description="Slack channel id (else the configured one)")] = None,
        requester: Annotated[str | None, Field(description="Slack user id the agent acts for")] = None,
        idempotency_key: Annotated[str | None, Field(description="a retry with it asks nothing new")] = None,
    ) -> dict[str, Any]:
        """Ask people in Slack to sign off a tool call and wait for their decision (progress is reported).

        Returns the request: ``status`` is approved, denied, expired or cancelled (a wait that ran out withdraws
        it); ``decision`` says who decided, when and why.

        Raises:
            ToolError: The API refused the request (the message names the field) or cannot be reached.
        """
        body = _body(
            settings,
            tool=tool,
            tool_input=input or {},
            reason=reason,
            channel=channel,
            requester=requester,
            idempotency_key=idempotency_key,
        )
        try:
            return await _decided(client_of(ctx), body, ctx, timeout_s=settings.timeout)
        except ApiError as error:
            raise ToolError(refusals.request_refused(error)) from None

    @server.tool(name=PERMISSION_TOOL)
    async def permission_prompt(
        tool_name: Annotated[str, Field(description="the tool Claude Code wants to run")],
        ctx: Context,
        *,
        input: Annotated[dict[str, Any] | None, Field(description="its input")] = None,
        tool_use_id: Annotated[str | None, Field(description="the tool use's id")] = None,
    ) -> CallToolResult:
        """Claude Code's permission prompt, decided by people in Slack: allow (with the input) or deny (with why)."""
        arguments = input or {}
        if tool_name == ASK_USER_QUESTION:
            try:
                poll = LongPoll(client_of(ctx), ctx, settings.timeout)
            except ApiError as error:
                return _one_text_block({"behavior": "deny", "message": asked_person.could_not_ask(error)})
            return _one_text_block(await answer_questions(poll, settings, arguments, tool_use_id=tool_use_id))
        body = _body(settings, tool=tool_name, tool_input=arguments, idempotency_key=tool_use_id)
        try:
            request = await _decided(client_of(ctx), body, ctx, timeout_s=settings.timeout)
        except ApiError as error:
            return _one_text_block({"behavior": "deny", "message": refusals.could_not_ask(error)})
        return _one_text_block(permission_answer(request, arguments))

    return server


def _one_text_block(answer: dict[str, Any]) -> CallToolResult:
    """The answer as Claude Code reads it: exactly one text block holding its JSON, nothing structured beside it.

    Claude Code refuses any other shape ("expected a single text block") and then fails closed. A tool that
    declares an output schema gets ``structuredContent`` next to its text, which the protocol versions
    since 2025-06-18 pass on: so this tool builds its result itself and declares none.
    """
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(answer))])


def permission_answer(request: dict[str, Any], tool_input: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's answer for a decided request: allow only an approval, deny anything else with why.

    An approver may have edited the call: Claude Code then runs their input (``updatedInput``). Either way the input
    allowed must be the one the approval names (its digest), or nothing runs.
    """
    status = request["status"]
    decision = request.get("decision") or {}
    if status == "approved":
        edited = decision.get("updated_input")
        runs = edited if isinstance(edited, dict) else tool_input
        named = decision.get("input_digest")
        if named is not None and input_digest(runs) != named:
            return {"behavior": "deny", "message": refusals.OTHER_ARGUMENTS}
        return {"behavior": "allow", "updatedInput": runs}
    return {"behavior": "deny", "message": refusals.not_approved(request)}


async def _decided(api: SignoffApi, body: dict[str, Any], ctx: Context, *, timeout_s: int) -> dict[str, Any]:
    """Ask for a sign-off, then wait for the decision (``LongPoll``)."""
    poll = LongPoll(api, ctx, timeout_s)
    request = await anyio.to_thread.run_sync(api.ask, body)
    return await poll.settled(request, kind="approval")


def _body(
    settings: McpSettings,
    *,
    tool: str,
    tool_input: dict[str, Any],
    reason: str | None = None,
    channel: str | None = None,
    requester: str | None = None,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"tool": tool, "input": tool_input}
    for name, value in (
        ("reason", reason),
        ("channel", channel or settings.channel),
        ("requester", requester or settings.requester),
        ("idempotency_key", idempotency_key),
    ):
        if value is not None:
            body[name] = value
    return body


def _api_of(settings: McpSettings, ctx: Context) -> SignoffApi:
    """The caller's own key over HTTP (``Authorization: Bearer``), else the configured one."""
    headers = {name.lower(): value for name, value in (ctx.headers or {}).items()}
    scheme, _, key = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and key.strip():
        return SignoffApi(settings.api_url, key.strip())
    if settings.api_key is None:
        raise ApiError(401, "no API key: set SIGNOFF_API_KEY, or send Authorization: Bearer <key>")
    return SignoffApi(settings.api_url, settings.api_key.get_secret_value())
