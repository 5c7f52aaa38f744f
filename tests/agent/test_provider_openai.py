"""OpenAIChatModel against the real ``openai`` SDK talking to a loopback HTTP server."""

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from agent import Agent, ApprovalGate
from agent.models.base import ModelError
from agent.models.openai import OpenAIChatModel
from agent.tools import ToolSpec
from state.shapes import Message
from tests.agent.loopback_http import LoopbackServer
from tests.agent.support import Recorder, decision, respond, tool_results

SPEC: ToolSpec = {
    "name": "restart_service",
    "description": "Restart a service.",
    "inputSchema": {"json": {"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]}},
}


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One tool call of a response."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def answer(
    content: str | None, finish_reason: str | None = "stop", tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A chat completions response body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def model(server: LoopbackServer) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-test", api_key="test-key", base_url=f"{server.url}/v1", max_retries=0)


def test_tool_use_round_trip_sends_converted_messages_and_reads_the_tool_call(
    server: LoopbackServer, model: OpenAIChatModel
) -> None:
    server.reply(answer("Restarting again.", "tool_calls", [call("call_2", "restart_service", '{"service": "cart"}')]))
    messages: list[Message] = [
        {"role": "user", "content": [{"text": "restart checkout and cart"}]},
        {
            "role": "assistant",
            "content": [
                {"text": "On it."},
                {"toolUse": {"toolUseId": "call_1", "name": "restart_service", "input": {"service": "checkout"}}},
                {"toolUse": {"toolUseId": "call_9", "name": "restart_service", "input": {"service": "x"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "call_1", "status": "success", "content": [{"text": "restarted"}]}},
                {"toolResult": {"toolUseId": "call_9", "status": "error", "content": [{"json": {"code": 404}}]}},
            ],
        },
    ]

    turn = model.converse(messages, [SPEC], "You are an operator.")

    assert turn.stop_reason == "tool_use"
    assert turn.message == {
        "role": "assistant",
        "content": [
            {"text": "Restarting again."},
            {"toolUse": {"toolUseId": "call_2", "name": "restart_service", "input": {"service": "cart"}}},
        ],
    }
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.body == {
        "model": "gpt-test",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "restart_service",
                    "description": "Restart a service.",
                    "parameters": SPEC["inputSchema"]["json"],
                },
            }
        ],
        "messages": [
            {"role": "system", "content": "You are an operator."},
            {"role": "user", "content": "restart checkout and cart"},
            {
                "role": "assistant",
                "content": "On it.",
                "tool_calls": [
                    call("call_1", "restart_service", json.dumps({"service": "checkout"})),
                    call("call_9", "restart_service", json.dumps({"service": "x"})),
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "restarted"},
            {"role": "tool", "tool_call_id": "call_9", "content": 'Error: {"code": 404}'},
        ],
    }


def test_text_answer_without_tools_or_system(server: LoopbackServer, model: OpenAIChatModel) -> None:
    server.reply(answer("All good."))

    turn = model.converse([{"role": "user", "content": [{"text": "status?"}]}], [], None)

    assert turn.stop_reason == "end_turn"
    assert turn.message == {"role": "assistant", "content": [{"text": "All good."}]}
    [body] = server.bodies()
    assert body == {"model": "gpt-test", "messages": [{"role": "user", "content": "status?"}]}


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("content_filter", "content_filtered"),
    ],
)
def test_finish_reasons_are_mapped(
    server: LoopbackServer, model: OpenAIChatModel, reported: str, expected: str
) -> None:
    server.reply(answer("x", reported))

    assert model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None).stop_reason == expected


def test_tool_calls_reported_with_stop_are_tool_use(server: LoopbackServer, model: OpenAIChatModel) -> None:
    server.reply(answer(None, "stop", [call("c1", "restart_service", '{"service": "a"}')]))

    turn = model.converse([{"role": "user", "content": [{"text": "hi"}]}], [SPEC], None)

    assert turn.stop_reason == "tool_use"
    assert turn.message["content"] == [
        {"toolUse": {"toolUseId": "c1", "name": "restart_service", "input": {"service": "a"}}}
    ]


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(500, "InternalServerError"), (429, "RateLimitError"), (401, "AuthenticationError")],
)
def test_http_errors_become_model_errors_with_the_sdk_error_as_cause(
    server: LoopbackServer, model: OpenAIChatModel, status: int, error_type: str
) -> None:
    server.reply({"error": {"message": "boom", "type": "server_error"}}, status)

    with pytest.raises(ModelError, match=r"provider=<openai>, model=<gpt-test>") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert isinstance(raised.value.__cause__, getattr(openai, error_type))
    assert isinstance(raised.value.__cause__, openai.APIStatusError)
    assert len(server.requests) == 1  # max_retries=0


def test_connection_error_becomes_model_error() -> None:
    with LoopbackServer() as gone:
        url = gone.url
    model = OpenAIChatModel("gpt-test", api_key="k", base_url=url, max_retries=0, timeout=5)

    with pytest.raises(ModelError, match="openai") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert isinstance(raised.value.__cause__, openai.APIConnectionError)


@pytest.mark.parametrize("arguments", ['{"service": ', "[1, 2]"])
def test_malformed_tool_arguments_become_model_error(
    server: LoopbackServer, model: OpenAIChatModel, arguments: str
) -> None:
    server.reply(answer(None, "tool_calls", [call("c1", "restart_service", arguments)]))

    with pytest.raises(ModelError, match=r"provider=<openai>, model=<gpt-test>") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [SPEC], None)

    assert isinstance(raised.value.__cause__, ValueError)


@pytest.mark.parametrize(
    "body",
    [
        {"unexpected": True},
        {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []},
        {"id": "x", "choices": [{"index": 0, "finish_reason": "stop"}]},
    ],
)
def test_malformed_response_becomes_model_error(server: LoopbackServer, model: OpenAIChatModel, body: Any) -> None:
    server.reply(body)

    with pytest.raises(ModelError, match=r"provider=<openai>, model=<gpt-test>") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert raised.value.__cause__ is not None


def test_non_json_response_becomes_model_error(server: LoopbackServer, model: OpenAIChatModel) -> None:
    server.reply(raw=b"<html>gateway</html>", headers={"Content-Type": "text/html"})

    with pytest.raises(ModelError, match="openai") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert raised.value.__cause__ is not None


def test_unsupported_block_is_a_model_error(model: OpenAIChatModel) -> None:
    with pytest.raises(ModelError, match="not supported"):
        model.converse([{"role": "user", "content": [{"image": {"format": "png"}}]}], [], None)


def test_agent_approval_round_trip_calls_the_model_twice(server: LoopbackServer, model: OpenAIChatModel) -> None:
    server.reply(answer(None, "tool_calls", [call("call_1", "restart_service", '{"service": "checkout"}')]))
    server.reply(answer("restarted"))
    recorder = Recorder()
    agent = Agent(model, recorder.tools(), hooks=[ApprovalGate(["restart_service"])], system_prompt="Be careful.")

    stopped = agent("restart checkout")

    assert stopped.stop_reason == "interrupt"
    assert recorder.calls == []
    assert len(server.requests) == 1
    [interrupt] = stopped.interrupts

    done = agent([respond(interrupt.id, decision("approve"))])

    assert done.stop_reason == "end_turn"
    assert str(done) == "restarted"
    assert recorder.calls == [("restart_service", "checkout")]
    assert tool_results(agent.messages[-2])["call_1"]["status"] == "success"
    assert len(server.requests) == 2  # the resume ran the tool and called the model once, not twice
    second = server.requests[1].body
    assert [tool["function"]["name"] for tool in second["tools"]] == ["restart_service", "read_logs", "delete_volume"]
    assert second["messages"] == [
        {"role": "system", "content": "Be careful."},
        {"role": "user", "content": "restart checkout"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("call_1", "restart_service", json.dumps({"service": "checkout"}))],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "restarted checkout"},
    ]
