"""The model protocol: Converse messages and tool specs in, one assistant turn out."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from state.shapes import Message

if TYPE_CHECKING:
    from agent.tools import ToolSpec


UNPORTABLE_BLOCKS = frozenset({"reasoningContent", "cachePoint", "guardContent"})
"""Converse blocks that carry nothing another provider can use: left out of provider requests."""


class SdkClientOptions(TypedDict, total=False):
    """How an official SDK client is built when no ready client is given.

    Attributes:
        api_key: Defaults to the SDK's own lookup (its ``*_API_KEY`` variable).
        base_url: Another endpoint (a proxy, a gateway, a test server).
        max_retries: SDK retries of transient failures; ``None`` keeps the SDK default.
        timeout: Seconds per request; ``None`` keeps the SDK default.
    """

    api_key: str | None
    base_url: str | None
    max_retries: int | None
    timeout: float | None


def sdk_client_options(options: SdkClientOptions) -> dict[str, Any]:
    """Keyword arguments for an official SDK client; unset retries and timeout keep the SDK's defaults."""
    client_options: dict[str, Any] = {"api_key": options.get("api_key"), "base_url": options.get("base_url")}
    if (max_retries := options.get("max_retries")) is not None:
        client_options["max_retries"] = max_retries
    if (timeout := options.get("timeout")) is not None:
        client_options["timeout"] = timeout
    return client_options


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
