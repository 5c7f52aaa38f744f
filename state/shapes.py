"""Bedrock Converse / Strands content shapes, as typed dicts.

These are the wire shapes: the agent loop, the session store and Strands itself exchange exactly
these dicts. They are validated (``state.validation``) wherever data comes from outside.
Blocks this project does not interpret (images, documents, reasoning, ...) pass through untouched.
``typing_extensions.TypedDict`` because pydantic needs it to validate typed dicts on Python 3.11.
"""

from typing import Any, Literal, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

# Strict: stored JSON has exact types, so "1" is never silently taken for 1. Extra keys are kept:
# Strands and Bedrock add fields over time, and a session must survive a round trip through us.
_WIRE = ConfigDict(strict=True, extra="allow")

Role = Literal["user", "assistant"]
ToolResultStatus = Literal["success", "error"]


@with_config(_WIRE)
class ToolUse(TypedDict):
    """A model's request to call a tool."""

    toolUseId: str
    name: str
    input: Any
    reasoningSignature: NotRequired[str]


@with_config(_WIRE)
class ToolResultContent(TypedDict, total=False):
    """One piece of a tool's output."""

    text: str
    json: Any
    image: dict[str, Any]
    document: dict[str, Any]


@with_config(_WIRE)
class ToolResult(TypedDict):
    """The outcome of one tool call, matched to its request by ``toolUseId``."""

    toolUseId: str
    status: ToolResultStatus
    content: list[ToolResultContent]


@with_config(_WIRE)
class InterruptResponse(TypedDict):
    """A human's answer to one interrupt."""

    interruptId: str
    response: Any


@with_config(_WIRE)
class InterruptResponseContent(TypedDict):
    """The content block that carries an ``InterruptResponse`` into a resumed invocation."""

    interruptResponse: InterruptResponse


@with_config(_WIRE)
class ContentBlock(TypedDict, total=False):
    """One block of a message; exactly one key is set."""

    text: str
    toolUse: ToolUse
    toolResult: ToolResult
    image: dict[str, Any]
    document: dict[str, Any]
    reasoningContent: dict[str, Any]
    cachePoint: dict[str, Any]
    guardContent: dict[str, Any]
    citationsContent: dict[str, Any]
    audio: dict[str, Any]
    video: dict[str, Any]


@with_config(_WIRE)
class Message(TypedDict):
    """One turn of the conversation."""

    role: Role
    content: list[ContentBlock]
    metadata: NotRequired[dict[str, Any]]


Messages = list[Message]
