"""A model over Anthropic's Messages API, through the official ``anthropic`` SDK.

Needs the ``anthropic`` extra. Converse messages go out as Anthropic content blocks and the answer
comes back as a Converse assistant message; every SDK failure surfaces as ``ModelError``.
"""

import json
from typing import TYPE_CHECKING, Any, Unpack

import anthropic
from anthropic.types import (
    ContentBlockParam,
    MessageParam,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
)

from agent.models.base import UNPORTABLE_BLOCKS, ModelError, ModelTurn, SdkClientOptions, sdk_client_options
from state.shapes import ContentBlock, Message, ToolResult

if TYPE_CHECKING:
    from agent.tools import ToolSpec

_STOP_REASONS = {
    "tool_use": "tool_use",
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "end_turn",
}


class AnthropicModel:
    """Claude over the Messages API.

    Args:
        model_id: The Anthropic model name (``"claude-sonnet-4-5"``, ...).
        max_tokens: The answer's token budget (the Messages API requires one).
        client: A ready client; otherwise one is built from ``options``.
        **options: How that client is built (``SdkClientOptions``): ``api_key`` (defaults to the
            SDK's lookup of ``ANTHROPIC_API_KEY``), ``base_url``, ``max_retries``, ``timeout``.
    """

    def __init__(
        self,
        model_id: str,
        *,
        max_tokens: int = 1024,
        client: anthropic.Anthropic | None = None,
        **options: Unpack[SdkClientOptions],
    ) -> None:
        """Keep the settings; build the client unless one is given (no request is made)."""
        self.model_id = model_id
        self.max_tokens = max_tokens
        if client is None:
            client = anthropic.Anthropic(**sdk_client_options(options))
        self.client = client

    def converse(self, messages: list[Message], tool_specs: "list[ToolSpec]", system_prompt: str | None) -> ModelTurn:
        """Send the conversation to the Messages API and return its answer.

        Raises:
            ModelError: The request failed, or the answer could not be read.
        """
        request: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": self.max_tokens,
            "messages": self._messages(messages),
        }
        if system_prompt:
            request["system"] = system_prompt
        if tool_specs:
            request["tools"] = [_tool(spec) for spec in tool_specs]
        try:
            response = self.client.messages.create(**request)
        except anthropic.AnthropicError as error:
            raise ModelError(f"provider=<anthropic>, model=<{self.model_id}> | request failed: {error}") from error
        try:
            return _turn(response)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise ModelError(f"provider=<anthropic>, model=<{self.model_id}> | unreadable response: {error}") from error

    def _messages(self, messages: list[Message]) -> list[MessageParam]:
        converted: list[MessageParam] = []
        for message in messages:
            content = [self._block(block) for block in message["content"] if not UNPORTABLE_BLOCKS & block.keys()]
            if not content:
                continue
            if message["role"] == "assistant":
                converted.append({"role": "assistant", "content": content})
            else:
                converted.append({"role": "user", "content": content})
        return converted

    def _block(self, block: ContentBlock) -> ContentBlockParam:
        if "text" in block:
            return {"type": "text", "text": block["text"]}
        if "toolUse" in block:
            tool_use = block["toolUse"]
            return {
                "type": "tool_use",
                "id": tool_use["toolUseId"],
                "name": tool_use["name"],
                "input": tool_use["input"],
            }
        if "toolResult" in block:
            return self._tool_result(block["toolResult"])
        raise ModelError(
            f"provider=<anthropic>, model=<{self.model_id}>, blocks=<{sorted(block)}> | content block not supported"
        )

    def _tool_result(self, result: ToolResult) -> ToolResultBlockParam:
        content: list[TextBlockParam] = []
        for item in result["content"]:
            if "text" in item:
                content.append({"type": "text", "text": item["text"]})
            elif "json" in item:
                content.append({"type": "text", "text": json.dumps(item["json"])})
            else:
                raise ModelError(
                    f"provider=<anthropic>, model=<{self.model_id}>, blocks=<{sorted(item)}>"
                    " | tool result content not supported"
                )
        return {
            "type": "tool_result",
            "tool_use_id": result["toolUseId"],
            "content": content,
            "is_error": result["status"] == "error",
        }


def _tool(spec: "ToolSpec") -> ToolParam:
    return {"name": spec["name"], "description": spec["description"], "input_schema": spec["inputSchema"]["json"]}


def _turn(response: anthropic.types.Message) -> ModelTurn:
    content: list[ContentBlock] = []
    for block in response.content:
        if block.type == "text":
            content.append({"text": block.text})
        elif block.type == "tool_use":
            if not isinstance(block.id, str) or not isinstance(block.name, str):
                raise ValueError("tool_use block without an id or a name")
            content.append({"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.input}})
    if not isinstance(response.role, str) or response.role != "assistant":
        raise ValueError(f"role=<{response.role}> | not an assistant message")
    stop_reason = response.stop_reason or "end_turn"
    return ModelTurn({"role": "assistant", "content": content}, _STOP_REASONS.get(stop_reason, stop_reason))
