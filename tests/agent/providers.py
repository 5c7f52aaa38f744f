"""The three model providers behind one test double, so a provider scenario is written once and run on each.

Anthropic and OpenAI: the real SDK against ``LoopbackServer`` (every request recorded, each answered with the next
queued reply). Bedrock: a real bedrock-runtime client answered by botocore's own ``Stubber``, every request's
parameters recorded by a client event handler. A double queues answers in the provider's own wire form, and reads
back what the model class sent in a provider-neutral form (system prompt, tool names, the last tool result).
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, ClassVar, Self

import anthropic
import boto3  # type: ignore[import-untyped]
import openai
from botocore.exceptions import ClientError  # type: ignore[import-untyped]
from botocore.stub import Stubber  # type: ignore[import-untyped]

from agent.models.anthropic import AnthropicModel
from agent.models.base import Model
from agent.models.bedrock import BedrockModel
from agent.models.openai import OpenAIChatModel
from agent.tools import ToolSpec
from state.shapes import Message
from tests.agent.loopback_http import LoopbackServer, Recorded

JsonDict = dict[str, Any]

RESTART_SPEC: ToolSpec = {
    "name": "restart_service",
    "description": "Restart a service.",
    "inputSchema": {"json": {"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]}},
}


def restart_conversation(id_prefix: str) -> list[Message]:
    """A conversation to send: a request, two restarts asked at once, and their results (one failed); the provider's
    tool-call ids are ``<id_prefix>_1`` and ``<id_prefix>_9``."""
    first, second = f"{id_prefix}_1", f"{id_prefix}_9"
    return [
        {"role": "user", "content": [{"text": "restart checkout and cart"}]},
        {
            "role": "assistant",
            "content": [
                {"text": "On it."},
                {"toolUse": {"toolUseId": first, "name": "restart_service", "input": {"service": "checkout"}}},
                {"toolUse": {"toolUseId": second, "name": "restart_service", "input": {"service": "x"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": first, "status": "success", "content": [{"text": "restarted"}]}},
                {"toolResult": {"toolUseId": second, "status": "error", "content": [{"json": {"code": 404}}]}},
            ],
        },
    ]


def restarting_again(call_id: str) -> Message:
    """The answer the doubles are told to give to ``restart_conversation``, as the model must read it."""
    return {
        "role": "assistant",
        "content": [
            {"text": "Restarting again."},
            {"toolUse": {"toolUseId": call_id, "name": "restart_service", "input": {"service": "cart"}}},
        ],
    }


class ProviderDouble:
    """One provider's side of the wire. Subclasses fill in the class attributes and the methods.

    Attributes:
        name: The provider, as test ids show it.
        error_names: A regex a ``ModelError`` of this provider matches (it names the provider and the model).
        stop_reasons: ``(what the provider reports, the stop reason the model class maps it to)``.
        failures: Provider-side failures ``fail`` can queue, by id.
        malformed: Answers that are not a usable turn.
    """

    name: ClassVar[str]
    error_names: ClassVar[str]
    stop_reasons: ClassVar[list[tuple[str, str]]]
    failures: ClassVar[list[str]]
    malformed: ClassVar[list[Any]]

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Self]:
        """The double, answering until the block ends."""
        raise NotImplementedError
        yield

    def model(self) -> Model:
        raise NotImplementedError

    def answer_text(self, text: str, stop_reason: str | None = None) -> None:
        """Queue a text turn (stopped for ``stop_reason`` in the provider's words; by default, the end of the turn)."""
        raise NotImplementedError

    def answer_tool_call(self, call_id: str, name: str, arguments: JsonDict) -> None:
        """Queue a turn asking for one tool call."""
        raise NotImplementedError

    def fail(self, failure: str) -> type[BaseException]:
        """Queue the provider-side ``failure``; returns the SDK's exception type the ``ModelError`` must chain."""
        raise NotImplementedError

    def malformed_model(self, answer: Any) -> Model:
        """A model whose next answer is ``answer``."""
        raise NotImplementedError

    def sent_count(self) -> int:
        """How many requests the model class sent."""
        raise NotImplementedError

    def sent_system(self, index: int) -> str | None:
        """The system prompt of the ``index``-th request; ``None`` if it sent none."""
        raise NotImplementedError

    def sent_tool_names(self, index: int) -> list[str] | None:
        """The tools offered in the ``index``-th request; ``None`` if it sent no tools field."""
        raise NotImplementedError

    def sent_last_tool_result(self, index: int) -> tuple[str, str]:
        """``(call id, text)`` of the tool result closing the ``index``-th request's conversation."""
        raise NotImplementedError


def unchanged(*reasons: str) -> list[tuple[str, str]]:
    """``stop_reasons`` entries for the provider's stop reasons the model class passes on under the same name."""
    return [(reason, reason) for reason in reasons]


class HttpDouble(ProviderDouble):
    """A provider reached over HTTP: its SDK (``sdk``, the package, which names the provider) talks to ``server``
    for the model ``model_id``.

    The anthropic and openai SDKs name their exceptions alike, so both fail the same way: ``failures`` are the HTTP
    statuses, each raising ``sdk_error(status)``.
    """

    sdk: ClassVar[ModuleType]
    model_id: ClassVar[str]
    failures = ["500", "429", "401"]

    def __init_subclass__(cls) -> None:
        """A subclass is named after its SDK; its ``ModelError`` names the provider and the model."""
        super().__init_subclass__()
        cls.name = cls.sdk.__name__
        cls.error_names = rf"provider=<{cls.name}>, model=<{cls.model_id}>"

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Self]:
        with LoopbackServer() as server:
            yield cls(server)

    def model(self) -> Model:
        return self.model_at(self.server.url)

    def model_at(self, url: str) -> Model:
        """The model class pointed at ``url`` (a 5 s timeout, no retries)."""
        raise NotImplementedError

    def unreachable_model(self) -> Model:
        """The model class pointed at a server that is gone."""
        with LoopbackServer() as gone:
            url = gone.url
        return self.model_at(url)

    def sdk_error(self, failure: str) -> type[BaseException]:
        """The exception the SDK raises when the provider answers with the HTTP status ``failure``."""
        errors: dict[str, type[BaseException]] = {
            "500": self.sdk.InternalServerError,
            "429": self.sdk.RateLimitError,
            "401": self.sdk.AuthenticationError,
        }
        return errors[failure]

    def sent(self, index: int) -> JsonDict:
        body: JsonDict = self.server.requests[index].body
        return body

    def sent_count(self) -> int:
        return len(self.server.requests)

    def malformed_model(self, answer: Any) -> Model:
        self.server.reply(answer)
        return self.model()

    def converse_the_restarts(self, id_prefix: str) -> Recorded:
        """Send ``restart_conversation(id_prefix)``, check the model read the queued ``restarting_again`` reply (call
        ``<id_prefix>_2``), and return the one request the SDK sent."""
        turn = self.model().converse(restart_conversation(id_prefix), [RESTART_SPEC], "You are an operator.")
        assert turn.stop_reason == "tool_use"
        assert turn.message == restarting_again(f"{id_prefix}_2")
        [request] = self.server.requests
        return request


class AnthropicDouble(HttpDouble):
    sdk: ClassVar[ModuleType] = anthropic
    model_id = "claude-test"
    stop_reasons = [
        *unchanged("end_turn", "tool_use", "max_tokens", "refusal", "pause_turn"),
        ("stop_sequence", "end_turn"),
    ]
    malformed = [
        {"unexpected": True},
        {"type": "message", "role": "assistant", "content": None, "stop_reason": "end_turn"},
        {"type": "message", "role": "assistant", "content": [{"type": "tool_use", "input": {}}]},
    ]

    def model_at(self, url: str) -> AnthropicModel:
        return AnthropicModel(self.model_id, max_tokens=256, api_key="test-key", base_url=url, max_retries=0, timeout=5)

    def reply(self, content: list[JsonDict], stop_reason: str | None = "end_turn") -> None:
        """Queue a Messages API answer with ``content`` blocks."""
        self.server.reply(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": self.model_id,
                "content": content,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": {"input_tokens": 3, "output_tokens": 5},
            }
        )

    def answer_text(self, text: str, stop_reason: str | None = None) -> None:
        self.reply([{"type": "text", "text": text}], stop_reason or "end_turn")

    def answer_tool_call(self, call_id: str, name: str, arguments: JsonDict) -> None:
        self.reply([{"type": "tool_use", "id": call_id, "name": name, "input": arguments}], "tool_use")

    def fail(self, failure: str) -> type[BaseException]:
        self.server.reply({"type": "error", "error": {"type": "api_error", "message": "boom"}}, int(failure))
        return self.sdk_error(failure)

    def sent_system(self, index: int) -> str | None:
        return self.sent(index).get("system")

    def sent_tool_names(self, index: int) -> list[str] | None:
        tools = self.sent(index).get("tools")
        return None if tools is None else [tool["name"] for tool in tools]

    def sent_last_tool_result(self, index: int) -> tuple[str, str]:
        [result] = self.sent(index)["messages"][-1]["content"]
        assert result["type"] == "tool_result"
        assert result["is_error"] is False
        return result["tool_use_id"], "".join(part["text"] for part in result["content"])


def tool_call(call_id: str, name: str, arguments: str) -> JsonDict:
    """One tool call of a chat completion (``arguments``: the JSON text the model wrote)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class OpenAIDouble(HttpDouble):
    sdk: ClassVar[ModuleType] = openai
    model_id = "gpt-test"
    stop_reasons = [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("content_filter", "content_filtered"),
    ]
    malformed = [
        {"unexpected": True},
        {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []},
        {"id": "x", "choices": [{"index": 0, "finish_reason": "stop"}]},
    ]

    def model_at(self, url: str) -> OpenAIChatModel:
        return OpenAIChatModel(self.model_id, api_key="test-key", base_url=f"{url}/v1", max_retries=0, timeout=5)

    def reply(self, message: JsonDict, finish_reason: str | None = "stop") -> None:
        """Queue a chat completion whose one choice is ``message``."""
        self.server.reply(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": self.model_id,
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            }
        )

    def answer_text(self, text: str, stop_reason: str | None = None) -> None:
        self.reply({"role": "assistant", "content": text}, stop_reason or "stop")

    def answer_tool_call(self, call_id: str, name: str, arguments: JsonDict) -> None:
        call = tool_call(call_id, name, json.dumps(arguments))
        self.reply({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")

    def fail(self, failure: str) -> type[BaseException]:
        self.server.reply({"error": {"message": "boom", "type": "server_error"}}, int(failure))
        return self.sdk_error(failure)

    def sent_system(self, index: int) -> str | None:
        first = self.sent(index)["messages"][0]
        return str(first["content"]) if first["role"] == "system" else None

    def sent_tool_names(self, index: int) -> list[str] | None:
        tools = self.sent(index).get("tools")
        return None if tools is None else [tool["function"]["name"] for tool in tools]

    def sent_last_tool_result(self, index: int) -> tuple[str, str]:
        result = self.sent(index)["messages"][-1]
        assert result["role"] == "tool"
        return result["tool_call_id"], result["content"]


BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"


def converse_answer(message: JsonDict, stop_reason: str) -> JsonDict:
    """A complete ``converse`` answer (the Stubber checks it against the service's schema)."""
    return {
        "output": {"message": message},
        "stopReason": stop_reason,
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 42},
    }


def bedrock_client() -> Any:
    """A real bedrock-runtime client with dummy credentials (a Stubber answers it; nothing leaves the machine)."""
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


class _AnswersAnything:
    """A bedrock-runtime stand-in answering whatever it was given (the Stubber checks answers against the schema)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def converse(self, **_: Any) -> Any:
        return self.answer


class BedrockDouble(ProviderDouble):
    name = "bedrock"
    error_names = rf"model_id=<{BEDROCK_MODEL}>, code=<"
    stop_reasons = unchanged("max_tokens", "guardrail_intervened", "stop_sequence", "content_filtered", "end_turn")
    failures = ["ThrottlingException"]
    malformed = [
        {},
        {"output": {}, "stopReason": "end_turn"},
        {"output": {"message": {"role": "assistant", "content": []}}},
        {"output": {"message": {"role": "user", "content": []}}, "stopReason": "end_turn"},
        {"output": {"message": {"role": "assistant", "content": "x"}}, "stopReason": "end_turn"},
        None,
    ]

    def __init__(self, client: Any, stubber: Any) -> None:
        self.client = client
        self.stubber = stubber
        self.requests: list[JsonDict] = []
        client.meta.events.register("provide-client-params.bedrock-runtime.Converse", self._record)

    @classmethod
    @contextmanager
    def serving(cls) -> Iterator[Self]:
        client = bedrock_client()
        with Stubber(client) as stubber:
            yield cls(client, stubber)
            stubber.assert_no_pending_responses()

    def _record(self, params: JsonDict, **_: Any) -> None:
        self.requests.append(json.loads(json.dumps(params)))

    def model(self) -> BedrockModel:
        return BedrockModel(BEDROCK_MODEL, client=self.client)

    def reply(self, message: JsonDict, stop_reason: str, expected: JsonDict | None = None) -> None:
        """Queue a converse answer with ``message``; with ``expected``, the Stubber checks the request's parameters."""
        self.stubber.add_response("converse", converse_answer(message, stop_reason), expected)

    def answer_text(self, text: str, stop_reason: str | None = None) -> None:
        self.reply({"role": "assistant", "content": [{"text": text}]}, stop_reason or "end_turn")

    def answer_tool_call(self, call_id: str, name: str, arguments: JsonDict) -> None:
        use = {"toolUse": {"toolUseId": call_id, "name": name, "input": arguments}}
        self.reply({"role": "assistant", "content": [use]}, "tool_use")

    def fail(self, failure: str) -> type[BaseException]:
        self.stubber.add_client_error(
            "converse", service_error_code=failure, service_message="Too many requests", http_status_code=429
        )
        return ClientError  # type: ignore[no-any-return]

    def malformed_model(self, answer: Any) -> Model:
        return BedrockModel(BEDROCK_MODEL, client=_AnswersAnything(answer))

    def sent_count(self) -> int:
        return len(self.requests)

    def sent_system(self, index: int) -> str | None:
        system = self.requests[index].get("system")
        return str(system[0]["text"]) if system else None

    def sent_tool_names(self, index: int) -> list[str] | None:
        config = self.requests[index].get("toolConfig")
        return None if config is None else [tool["toolSpec"]["name"] for tool in config["tools"]]

    def sent_last_tool_result(self, index: int) -> tuple[str, str]:
        [block] = self.requests[index]["messages"][-1]["content"]
        result = block["toolResult"]
        assert result["status"] == "success"
        return result["toolUseId"], "".join(part["text"] for part in result["content"])


DOUBLES: list[type[ProviderDouble]] = [AnthropicDouble, OpenAIDouble, BedrockDouble]
HTTP_DOUBLES: list[type[HttpDouble]] = [AnthropicDouble, OpenAIDouble]
