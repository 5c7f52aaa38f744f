"""The model protocol: Converse messages and tool specs in, one assistant turn out."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from state.shapes import Message

if TYPE_CHECKING:
    from agent.tools import ToolSpec


UNPORTABLE_BLOCKS = frozenset({"reasoningContent", "cachePoint", "guardContent"})
"""Converse blocks that carry nothing another provider can use: left out of provider requests."""


def sdk_client_options(
    *, api_key: str | None, base_url: str | None, max_retries: int | None, timeout: float | None
) -> dict[str, Any]:
    """Keyword arguments for an official SDK client; unset retries and timeout keep the SDK's defaults."""
    options: dict[str, Any] = {"api_key": api_key, "base_url": base_url}
    if max_retries is not None:
        options["max_retries"] = max_retries
    if timeout is not None:
        options["timeout"] = timeout
    return options


@dataclass(frozen=True)
class ModelTurn:
    """One answer of the model.

    Attributes:
        message: The assistant message (text and toolUse blocks).
        stop_reason: ``"tool_use"`` when it asks for tools, ``"end_turn"`` when done, or whatever
            else the provider reports (``"max_tokens"``, ``"guardrail_intervened"``, ...).
    """

    message: Message
    stop_reason: str


class ModelError(Exception):
    """A provider failed (network, quota, refusal, bad response); the cause is chained."""


class Model(Protocol):
    """An LLM. An implementation needs only ``converse``."""

    def converse(self, messages: list[Message], tool_specs: "list[ToolSpec]", system_prompt: str | None) -> ModelTurn:
        """Return the next assistant turn for the conversation.

        Raises:
            ModelError: The provider failed.
        """
        ...
