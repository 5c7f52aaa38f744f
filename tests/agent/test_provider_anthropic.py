"""AnthropicModel against the real ``anthropic`` SDK talking to a loopback HTTP server."""

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from agent import Agent, ApprovalGate
from agent.models.anthropic import AnthropicModel
from agent.models.base import ModelError
from agent.tools import ToolSpec
from state.shapes import Message
from tests.agent.loopback_http import LoopbackServer
from tests.agent.support import Recorder, decision, respond, tool_results

SPEC: ToolSpec = {
    "name": "restart_service",
    "description": "Restart a service.",
    "inputSchema": {"json": {"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]}},
}


def answer(content: list[dict[str, Any]], stop_reason: str | None = "end_turn") -> dict[str, Any]:
    """A Messages API response body."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 5},
    }


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def model(server: LoopbackServer) -> AnthropicModel:
    return AnthropicModel("claude-test", max_tokens=256, api_key="test-key", base_url=server.url, max_retries=0)


def test_tool_use_round_trip_sends_converted_messages_and_reads_the_tool_call(
    server: LoopbackServer, model: AnthropicModel
) -> None:
    server.reply(
        answer(
            [
                {"type": "text", "text": "Restarting again."},
                {"type": "tool_use", "id": "toolu_2", "name": "restart_service", "input": {"service": "cart"}},
            ],
            "tool_use",
        )
    )
    messages: list[Message] = [
        {"role": "user", "content": [{"text": "restart checkout and cart"}]},
        {
            "role": "assistant",
            "content": [
                {"text": "On it."},
                {"toolUse": {"toolUseId": "toolu_1", "name": "restart_service", "input": {"service": "checkout"}}},
                {"toolUse": {"toolUseId": "toolu_9", "name": "restart_service", "input": {"service": "x"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "toolu_1", "status": "success", "content": [{"text": "restarted"}]}},
                {"toolResult": {"toolUseId": "toolu_9", "status": "error", "content": [{"json": {"code": 404}}]}},
            ],
        },
    ]

    turn = model.converse(messages, [SPEC], "You are an operator.")

    assert turn.stop_reason == "tool_use"
    assert turn.message == {
        "role": "assistant",
        "content": [
            {"text": "Restarting again."},
            {"toolUse": {"toolUseId": "toolu_2", "name": "restart_service", "input": {"service": "cart"}}},
        ],
    }
    [request] = server.requests
    assert request.path == "/v1/messages"
    assert "test-key" in request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    assert request.body == {
        "model": "claude-test",
        "max_tokens": 256,
        "system": "You are an operator.",
        "tools": [
            {
                "name": "restart_service",
                "description": "Restart a service.",
                "input_schema": SPEC["inputSchema"]["json"],
            }
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "restart checkout and cart"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "On it."},
                    {"type": "tool_use", "id": "toolu_1", "name": "restart_service", "input": {"service": "checkout"}},
                    {"type": "tool_use", "id": "toolu_9", "name": "restart_service", "input": {"service": "x"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "restarted"}],
                        "is_error": False,
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_9",
                        "content": [{"type": "text", "text": '{"code": 404}'}],
                        "is_error": True,
                    },
                ],
            },
        ],
    }


def test_text_answer_without_tools_or_system(server: LoopbackServer, model: AnthropicModel) -> None:
    server.reply(answer([{"type": "text", "text": "All good."}]))

    turn = model.converse([{"role": "user", "content": [{"text": "status?"}]}], [], None)

    assert turn.stop_reason == "end_turn"
    assert turn.message == {"role": "assistant", "content": [{"text": "All good."}]}
    [body] = server.bodies()
    assert "tools" not in body
    assert "system" not in body


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "end_turn"),
        ("refusal", "refusal"),
        ("pause_turn", "pause_turn"),
    ],
)
def test_stop_reasons_are_mapped(server: LoopbackServer, model: AnthropicModel, reported: str, expected: str) -> None:
    server.reply(answer([{"type": "text", "text": "x"}], reported))

    assert model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None).stop_reason == expected


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(500, "InternalServerError"), (429, "RateLimitError"), (401, "AuthenticationError")],
)
def test_http_errors_become_model_errors_with_the_sdk_error_as_cause(
    server: LoopbackServer, model: AnthropicModel, status: int, error_type: str
) -> None:
    server.reply({"type": "error", "error": {"type": "api_error", "message": "boom"}}, status)

    with pytest.raises(ModelError, match=r"provider=<anthropic>, model=<claude-test>") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert isinstance(raised.value.__cause__, getattr(anthropic, error_type))
    assert isinstance(raised.value.__cause__, anthropic.APIStatusError)
    assert len(server.requests) == 1  # max_retries=0


def test_connection_error_becomes_model_error() -> None:
    with LoopbackServer() as gone:
        url = gone.url
    model = AnthropicModel("claude-test", api_key="k", base_url=url, max_retries=0, timeout=5)

    with pytest.raises(ModelError, match="anthropic") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert isinstance(raised.value.__cause__, anthropic.APIConnectionError)


@pytest.mark.parametrize(
    "body",
    [
        {"unexpected": True},
        {"type": "message", "role": "assistant", "content": None, "stop_reason": "end_turn"},
        {"type": "message", "role": "assistant", "content": [{"type": "tool_use", "input": {}}]},
    ],
)
def test_malformed_response_becomes_model_error(server: LoopbackServer, model: AnthropicModel, body: Any) -> None:
    server.reply(body)

    with pytest.raises(ModelError, match=r"provider=<anthropic>, model=<claude-test>") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert raised.value.__cause__ is not None


def test_non_json_response_becomes_model_error(server: LoopbackServer, model: AnthropicModel) -> None:
    server.reply(raw=b"<html>gateway</html>", headers={"Content-Type": "text/html"})

    with pytest.raises(ModelError, match="anthropic") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert raised.value.__cause__ is not None


def test_unsupported_block_is_a_model_error(model: AnthropicModel) -> None:
    with pytest.raises(ModelError, match="not supported"):
        model.converse([{"role": "user", "content": [{"image": {"format": "png"}}]}], [], None)


def test_agent_approval_round_trip_calls_the_model_twice(server: LoopbackServer, model: AnthropicModel) -> None:
    server.reply(
        answer(
            [{"type": "tool_use", "id": "toolu_1", "name": "restart_service", "input": {"service": "checkout"}}],
            "tool_use",
        )
    )
    server.reply(answer([{"type": "text", "text": "restarted"}]))
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
    assert tool_results(agent.messages[-2])["toolu_1"]["status"] == "success"
    assert len(server.requests) == 2  # the resume ran the tool and called the model once, not twice
    second = server.requests[1].body
    assert second["system"] == "Be careful."
    assert [tool["name"] for tool in second["tools"]] == ["restart_service", "read_logs", "delete_volume"]
    assert second["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": "restarted checkout"}],
                "is_error": False,
            }
        ],
    }
