"""Validation of data that comes from outside: stored sessions, resume requests.

Every check returns the caller's own data unchanged (so unknown pass-through fields keep their
identity) or raises ``ShapeError`` naming the first offending field, e.g.
``field=<pending_tool_execution.assistant_message.role> | Input should be 'user' or 'assistant'``.
"""

from typing import Any, NotRequired, cast

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

from state.shapes import InterruptResponseContent, Message, ToolResult

# The interrupt records are unpacked into dataclasses (``Interrupt(**data)``), so an extra key
# would fail later with a TypeError from deep inside: refuse it here instead.
_RECORD = ConfigDict(strict=True, extra="forbid")


class ShapeError(ValueError):
    """Data from outside does not have the expected shape.

    Attributes:
        field: Dotted path of the first offending field (``""`` for the value itself).
        problem: What is wrong with it.
    """

    def __init__(self, field: str, problem: str) -> None:
        """Build the message in the project's fixed form."""
        super().__init__(f"field=<{field}> | {problem}")
        self.field = field
        self.problem = problem


@with_config(_RECORD)
class _InterruptRecord(TypedDict):
    id: str
    name: str
    reason: NotRequired[Any]
    response: NotRequired[Any]


@with_config(_RECORD)
class _PendingRecord(TypedDict):
    assistant_message: Message
    completed_tool_results: list[ToolResult]


@with_config(ConfigDict(strict=True, extra="allow"))
class _Context(TypedDict, total=False):
    """The context keys this project reads; any others pass through."""

    responses: list[InterruptResponseContent]
    tool_use_message: Message
    tool_results: list[ToolResult]


@with_config(_RECORD)
class _InterruptStateRecord(TypedDict):
    interrupts: dict[str, _InterruptRecord]
    context: _Context
    activated: bool
    pending_tool_execution: NotRequired[_PendingRecord | None]


@with_config(_RECORD)
class _Response(TypedDict):
    interruptId: str
    response: Any


@with_config(_RECORD)
class _ResponseBlock(TypedDict):
    interruptResponse: _Response


_MESSAGES = TypeAdapter(list[Message])
_INTERRUPT_STATE = TypeAdapter(_InterruptStateRecord)
_RESPONSES = TypeAdapter(list[_ResponseBlock])
_AGENT_STATE = TypeAdapter(dict[str, Any], config=ConfigDict(strict=True))


def _check(adapter: TypeAdapter[Any], data: Any, prefix: str) -> None:
    try:
        adapter.validate_python(data)
    except ValidationError as error:
        first = error.errors()[0]
        path = ".".join(str(part) for part in (prefix, *first["loc"]) if part != "")
        raise ShapeError(path, first["msg"]) from error


def check_messages(data: Any, *, prefix: str = "messages") -> list[Message]:
    """Return ``data`` as a conversation once it has the Converse message shape.

    Every content block holds exactly one kind of content, as in Bedrock Converse: ``{}``, two
    kinds at once, or a whole message given as a block are refused. A kind this project does
    not know (a newer Bedrock block) passes through.
    """
    _check(_MESSAGES, data, prefix)
    for index, message in enumerate(data):
        for position, block in enumerate(message["content"]):
            if len(block) != 1:
                kinds = sorted(block)
                raise ShapeError(
                    f"{prefix}.{index}.content.{position}", f"a block holds exactly one kind of content, got {kinds}"
                )
    return cast(list[Message], data)


def check_agent_state(data: Any, *, prefix: str = "agent_state") -> dict[str, Any]:
    """Return ``data`` once it is a dict with string keys."""
    _check(_AGENT_STATE, data, prefix)
    return cast(dict[str, Any], data)


def check_interrupt_state(data: Any, *, prefix: str = "interrupt_state") -> dict[str, Any]:
    """Return ``data`` once it is a serialized ``_InterruptState`` (Strands 1.62 format).

    Beyond the types, every interrupt must be stored under its own id.
    """
    _check(_INTERRUPT_STATE, data, prefix)
    record = cast(dict[str, Any], data)
    for interrupt_id, interrupt in record["interrupts"].items():
        if interrupt["id"] != interrupt_id:
            raise ShapeError(
                f"{prefix}.interrupts.{interrupt_id}.id",
                f"interrupt stored under another id ({interrupt['id']!r})",
            )
    return record


def check_interrupt_responses(data: Any, *, prefix: str = "") -> list[InterruptResponseContent]:
    """Return ``data`` once it is a list of ``{"interruptResponse": {interruptId, response}}`` blocks."""
    _check(_RESPONSES, data, prefix)
    return cast(list[InterruptResponseContent], data)
