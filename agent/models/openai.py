"""A model over the OpenAI chat completions API, through the official ``openai`` SDK.

Needs the ``openai`` extra. Works with any server that speaks chat completions (OpenAI, Ollama,
vLLM, ...) through ``base_url``. Every SDK failure surfaces as ``ModelError``.
"""

import json
from typing import TYPE_CHECKING, Any, Unpack

import openai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageParam,
    ChatCompletionMessageToolCallUnionParam,
)

from agent.models.base import UNPORTABLE_BLOCKS, ModelError, ModelTurn, SdkClientOptions, sdk_client_options
from state.shapes import ContentBlock, Message, ToolResult

if TYPE_CHECKING:
    from agent.tools import ToolSpec

_STOP_REASONS = {
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "stop": "end_turn",
    "length": "max_tokens",
    "content_filter": "content_filtered",
}


class OpenAIChatModel:
    """A chat completions model.

    Args:
        model_id: The model name on that server (``"gpt-4o"``, ``"llama3.1"``, ...).
        client: A ready client; otherwise one is built from ``options``.
        **options: How that client is built (``SdkClientOptions``): ``api_key`` (defaults to the
            SDK's lookup of ``OPENAI_API_KEY``), ``base_url``, ``max_retries``, ``timeout``.
    """

    def __init__(
        self,
        model_id: str,
        *,
        client: openai.OpenAI | None = None,
        **options: Unpack[SdkClientOptions],
    ) -> None:
        """Keep the settings; build the client unless one is given (no request is made)."""
        self.model_id = model_id
        if client is None:
            client = openai.OpenAI(**sdk_client_options(options))
        self.client = client

    def _error(self, text: str) -> str:
        return f"provider=<openai>, model=<{self.model_id}> | {text}"

    def converse(self, messages: list[Message], tool_specs: "list[ToolSpec]", system_prompt: str | None) -> ModelTurn:
        """Send the conversation to chat completions and return its answer.

        Raises:
            ModelError: The request failed, or the answer could not be read.
        """
        request: dict[str, Any] = {"model": self.model_id, "messages": self._messages(messages, system_prompt)}
        if tool_specs:
            request["tools"] = [_tool(spec) for spec in tool_specs]
        try:
            response = self.client.chat.completions.create(**request)
        except openai.OpenAIError as error:
            raise ModelError(self._error(f"request failed: {error}")) from error
        try:
            return self._turn(response)
        except json.JSONDecodeError as error:
            raise ModelError(self._error(f"tool call arguments are not valid JSON: {error}")) from error
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as error:
            raise ModelError(self._error(f"unreadable response: {error}")) from error

    def _messages(self, messages: list[Message], system_prompt: str | None) -> list[ChatCompletionMessageParam]:
        converted: list[ChatCompletionMessageParam] = []
        if system_prompt:
            converted.append({"role": "system", "content": system_prompt})
        for message in messages:
            blocks = [block for block in message["content"] if not UNPORTABLE_BLOCKS & block.keys()]
            if message["role"] == "assistant":
                converted.extend(self._assistant(blocks))
            else:
                converted.extend(self._user(blocks))
        return converted

    def _assistant(self, blocks: list[ContentBlock]) -> list[ChatCompletionMessageParam]:
        texts: list[str] = []
        calls: list[ChatCompletionMessageToolCallUnionParam] = []
        for block in blocks:
            if "text" in block:
                texts.append(block["text"])
            elif "toolUse" in block:
                tool_use = block["toolUse"]
                calls.append(
                    {
                        "id": tool_use["toolUseId"],
                        "type": "function",
                        "function": {"name": tool_use["name"], "arguments": json.dumps(tool_use["input"])},
                    }
                )
            else:
                raise self._unsupported(block)
        if not texts and not calls:
            return []
        message: ChatCompletionAssistantMessageParam = {
            "role": "assistant",
            "content": "\n".join(texts) if texts else None,
        }
        if calls:
            message["tool_calls"] = calls
        return [message]

    def _user(self, blocks: list[ContentBlock]) -> list[ChatCompletionMessageParam]:
        # Tool results become "tool" messages, which must directly follow the assistant's tool calls;
        # any text of the same user message follows them.
        results: list[ChatCompletionMessageParam] = []
        texts: list[str] = []
        for block in blocks:
            if "toolResult" in block:
                results.append(self._tool_result(block["toolResult"]))
            elif "text" in block:
                texts.append(block["text"])
            else:
                raise self._unsupported(block)
        if texts:
            results.append({"role": "user", "content": "\n".join(texts)})
        return results

    def _tool_result(self, result: ToolResult) -> ChatCompletionMessageParam:
        parts: list[str] = []
        for item in result["content"]:
            if "text" in item:
                parts.append(item["text"])
            elif "json" in item:
                parts.append(json.dumps(item["json"]))
            else:
                raise ModelError(self._error(f"blocks=<{sorted(item)}> | tool result content not supported"))
        text = "\n".join(parts)
        if result["status"] == "error":
            text = f"Error: {text}"
        return {"role": "tool", "tool_call_id": result["toolUseId"], "content": text}

    def _unsupported(self, block: ContentBlock) -> ModelError:
        return ModelError(self._error(f"blocks=<{sorted(block)}> | content block not supported"))

    def _turn(self, response: ChatCompletion) -> ModelTurn:
        if not response.choices:
            raise ValueError("no choices")
        choice = response.choices[0]
        message = choice.message
        content: list[ContentBlock] = []
        if message.content:
            if not isinstance(message.content, str):
                raise TypeError("message content is not a string")
            content.append({"text": message.content})
        for call in message.tool_calls or []:
            if call.type != "function":
                raise ValueError(f"type=<{call.type}> | tool call type not supported")
            arguments = json.loads(call.function.arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError(f"tool=<{call.function.name}> | tool call arguments are not a JSON object")
            content.append({"toolUse": {"toolUseId": call.id, "name": call.function.name, "input": arguments}})
        finish_reason = choice.finish_reason or "end_turn"
        stop_reason = _STOP_REASONS.get(finish_reason, finish_reason)
        if stop_reason == "end_turn" and message.tool_calls:  # some servers report "stop" with tool calls
            stop_reason = "tool_use"
        return ModelTurn({"role": "assistant", "content": content}, stop_reason)


def _tool(spec: "ToolSpec") -> ChatCompletionFunctionToolParam:
    return {
        "type": "function",
        "function": {
            "name": spec["name"],
            "description": spec["description"],
            "parameters": spec["inputSchema"]["json"],
        },
    }
