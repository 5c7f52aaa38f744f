"""The model protocol: Converse messages and tool specs in, one assistant turn out."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from state.shapes import Message

if TYPE_CHECKING:
    from agent.tools import ToolSpec


UNPORTABLE_BLOCKS = frozenset({"reasoningContent", "cachePoint", "guardContent"})
"""Converse blocks that carry nothing another provider can use: left out of provider requests."""


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
