"""``ask_person``: an MCP tool that asks a person in Slack a question and waits for the answer.

The question is the API's (``POST /v1/questions``): words, options (one or several), or a form from a JSON Schema.
The tool waits as ``request_approval`` does (``LongPoll``: progress notifications, a withdrawal when the wait runs
out) and returns the answer with who gave it; a question left without an answer says so in ``message``.
"""

from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from bot.mcp.api_client import ApiError, SignoffApi
from bot.mcp.config import McpSettings
from bot.mcp.long_poll import LongPoll
from bot.render.texts import asked_person

TOOL_NAME = "ask_person"


def add_ask_person(server: MCPServer, settings: McpSettings, client_of: Callable[[Context], SignoffApi]) -> None:
    """Add the ``ask_person`` tool to ``server``."""

    @server.tool(name=TOOL_NAME)
    async def ask_person(
        question: Annotated[str, Field(description="the question, as the person will read it")],
        ctx: Context,
        *,
        options: Annotated[
            list[str | dict[str, str]] | None,
            Field(description='answers to pick from: labels, or {"label", "description"} (not with schema)'),
        ] = None,
        multiple: Annotated[bool, Field(description="with options: several may be picked")] = False,
        other: Annotated[
            bool, Field(description="with options: the person may answer in their own words instead (Other…)")
        ] = False,
        schema: Annotated[
            dict[str, Any] | None,
            Field(description='a form to fill in: a JSON Schema with "type": "object" (not with options)'),
        ] = None,
        name: Annotated[str | None, Field(description="what policy rules match (default: question)")] = None,
        channel: Annotated[str | None, Field(description="Slack channel id (else the configured one)")] = None,
        requester: Annotated[str | None, Field(description="Slack user id the agent acts for")] = None,
        idempotency_key: Annotated[str | None, Field(description="a retry with it asks nothing new")] = None,
    ) -> dict[str, Any]:
        """Ask a person in Slack a question and wait for the answer (progress is reported).

        Returns ``status`` (answered, expired or cancelled: a wait that ran out withdraws the question), ``answer``
        (the words, the label or labels picked, or the form's object), ``answered_by`` and a ``message`` to read.

        Raises:
            ToolError: The API refused the question (the message names the field) or cannot be reached.
        """
        body = question_body(
            settings,
            question=question,
            options=options,
            multiple=multiple,
            other=other,
            schema=schema,
            name=name,
            channel=channel,
            requester=requester,
            idempotency_key=idempotency_key,
        )
        try:
            api = client_of(ctx)
            asked = await anyio.to_thread.run_sync(api.ask_question, body)
            settled = await LongPoll(api, ctx, settings.timeout).settled(asked, kind="question")
        except ApiError as error:
            raise ToolError(asked_person.could_not_ask(error)) from None
        return outcome(settled)


def outcome(question: dict[str, Any]) -> dict[str, Any]:
    """What the agent receives for a settled question: the answer and who gave it, or why there is none."""
    answered = question["status"] == "answered"
    return {
        "id": question["id"],
        "status": question["status"],
        "answer": question.get("answer") if answered else None,
        "answered_by": question.get("answered_by") if answered else None,
        "answered_at": question.get("answered_at") if answered else None,
        "message": asked_person.answered(question) if answered else asked_person.not_answered(question),
    }


def question_body(
    settings: McpSettings,
    *,
    question: str,
    options: list[Any] | None = None,
    multiple: bool = False,
    other: bool = False,
    schema: dict[str, Any] | None = None,
    name: str | None = None,
    channel: str | None = None,
    requester: str | None = None,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """The body of ``POST /v1/questions``: what was given, the configured channel and requester otherwise."""
    body: dict[str, Any] = {"question": question}
    if multiple:
        body["multiple"] = True
    if other:
        body["other"] = True
    for field, value in (
        ("options", options),
        ("schema", schema),
        ("name", name),
        ("channel", channel or settings.channel),
        ("requester", requester or settings.requester),
        ("idempotency_key", idempotency_key),
    ):
        if value is not None:
            body[field] = value
    return body
