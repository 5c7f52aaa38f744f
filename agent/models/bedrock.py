"""Amazon Bedrock through the Converse API (``bedrock-runtime`` ``converse``).

Messages and tool specs are already in Converse shapes, so they go out nearly as they are: only
keys Bedrock would reject (a message's ``metadata``, a toolUse's ``reasoningSignature``) are
dropped. Needs ``boto3`` (the ``bedrock`` extra); ``agent.models`` does not import this module,
so the agent package works without it.
"""

from typing import TYPE_CHECKING, Any

import boto3  # type: ignore[import-untyped]
from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]

from agent.models.base import ModelError, ModelTurn
from state.shapes import ContentBlock, Message
from state.validation import ShapeError, check_messages

if TYPE_CHECKING:
    from agent.tools import ToolSpec

# What Bedrock accepts in a message and in the blocks this project adds keys to.
_MESSAGE_KEYS = frozenset({"role", "content"})
_TOOL_USE_KEYS = frozenset({"toolUseId", "name", "input", "type"})
_TOOL_RESULT_KEYS = frozenset({"toolUseId", "content", "status", "type"})


class BedrockModel:
    """A Bedrock model, called with one ``converse`` request per turn.

    Args:
        model_id: The Bedrock model or inference profile id.
        client: A ``bedrock-runtime`` client; one is created (default credentials) if omitted.
        region_name: Region of the client created when ``client`` is omitted.
        max_tokens: ``inferenceConfig.maxTokens``; left to Bedrock when ``None``.
        temperature: ``inferenceConfig.temperature``; left to Bedrock when ``None``.
    """

    def __init__(
        self,
        model_id: str,
        *,
        client: Any = None,
        region_name: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> None:
        """Keep the settings; no request is made until the first turn."""
        self.model_id = model_id
        self.client: Any = client if client is not None else boto3.client("bedrock-runtime", region_name=region_name)
        self.max_tokens = max_tokens
        self.temperature = temperature

    def converse(self, messages: list[Message], tool_specs: "list[ToolSpec]", system_prompt: str | None) -> ModelTurn:
        """Return the next assistant turn.

        Raises:
            ModelError: Bedrock or the client failed, or the response is not a Converse answer.
        """
        request = self.request(messages, tool_specs, system_prompt)
        try:
            response = self.client.converse(**request)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "Unknown")
            raise ModelError(f"model_id=<{self.model_id}>, code=<{code}> | bedrock converse failed: {error}") from error
        except BotoCoreError as error:
            code = type(error).__name__
            raise ModelError(f"model_id=<{self.model_id}>, code=<{code}> | bedrock converse failed: {error}") from error
        return self._turn(response)

    def request(
        self, messages: list[Message], tool_specs: "list[ToolSpec]", system_prompt: str | None
    ) -> dict[str, Any]:
        """The keyword arguments of the ``converse`` call for this turn."""
        request: dict[str, Any] = {"modelId": self.model_id, "messages": [_outgoing(message) for message in messages]}
        if system_prompt:
            request["system"] = [{"text": system_prompt}]
        if tool_specs:
            request["toolConfig"] = {"tools": [{"toolSpec": dict(spec)} for spec in tool_specs]}
        inference: dict[str, Any] = {}
        if self.max_tokens is not None:
            inference["maxTokens"] = self.max_tokens
        if self.temperature is not None:
            inference["temperature"] = self.temperature
        if inference:
            request["inferenceConfig"] = inference
        return request

    def _turn(self, response: Any) -> ModelTurn:
        try:
            message = response["output"]["message"]
            stop_reason = response["stopReason"]
            if not (
                isinstance(message, dict)
                and message.get("role") == "assistant"
                and isinstance(message.get("content"), list)
                and isinstance(stop_reason, str)
            ):
                raise TypeError("expected output.message (assistant, content list) and a string stopReason")
        except (KeyError, TypeError) as error:
            raise ModelError(
                f"model_id=<{self.model_id}>, code=<MalformedResponse> | bedrock converse returned no usable turn: "
                f"{error!r}"
            ) from error
        outgoing: Message = {"role": "assistant", "content": list(message["content"])}
        try:
            check_messages([outgoing], prefix="output")
        except ShapeError as error:
            raise ModelError(
                f"model_id=<{self.model_id}>, code=<MalformedResponse> | "
                f"bedrock converse returned a bad message: {error}"
            ) from error
        return ModelTurn(outgoing, stop_reason)


def _outgoing(message: Message) -> dict[str, Any]:
    """A message with only what Bedrock accepts."""
    out = {key: value for key, value in message.items() if key in _MESSAGE_KEYS}
    out["content"] = [_outgoing_block(block) for block in message["content"]]
    return out


def _outgoing_block(block: ContentBlock) -> dict[str, Any]:
    out: dict[str, Any] = dict(block)
    if "toolUse" in block:
        out["toolUse"] = {key: value for key, value in block["toolUse"].items() if key in _TOOL_USE_KEYS}
    if "toolResult" in block:
        out["toolResult"] = {key: value for key, value in block["toolResult"].items() if key in _TOOL_RESULT_KEYS}
    return out
