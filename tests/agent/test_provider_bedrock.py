"""BedrockModel against a real bedrock-runtime client, stubbed with botocore's own Stubber."""

from collections.abc import Iterator
from typing import Any

import boto3  # type: ignore[import-untyped]
import pytest
from botocore.exceptions import ClientError  # type: ignore[import-untyped]
from botocore.stub import Stubber  # type: ignore[import-untyped]

from agent import Agent, ApprovalGate, ModelError
from agent.models.bedrock import BedrockModel
from state.shapes import Message
from tests.agent.support import Recorder, decision, respond, tool_results

MODEL_ID = "anthropic.claude-3-5-sonnet-20240620-v1:0"
USAGE = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
METRICS = {"latencyMs": 42}


def _response(message: dict[str, Any], stop_reason: str) -> dict[str, Any]:
    return {"output": {"message": message}, "stopReason": stop_reason, "usage": USAGE, "metrics": METRICS}


@pytest.fixture
def client() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


@pytest.fixture
def stubber(client: Any) -> Iterator[Any]:
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


def test_tool_use_turn_sends_exact_converse_request(client: Any, stubber: Any) -> None:
    [restart, read_logs, _] = Recorder().tools()
    history: list[Message] = [
        {"role": "user", "content": [{"text": "restart checkout"}], "metadata": {"usage": {"inputTokens": 3}}},
        {
            "role": "assistant",
            "content": [
                {"text": "Reading logs first."},
                {"toolUse": {"toolUseId": "t0", "name": "read_logs", "input": {"service": "checkout"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "t0",
                        "status": "error",
                        "content": [{"text": "Not executed: denied by U1."}, {"json": {"code": 7}}],
                    }
                }
            ],
        },
    ]
    answer = {
        "role": "assistant",
        "content": [
            {"text": "Restarting."},
            {"toolUse": {"toolUseId": "t1", "name": "restart_service", "input": {"service": "checkout"}}},
        ],
    }
    expected = {
        "modelId": MODEL_ID,
        "messages": [
            {"role": "user", "content": [{"text": "restart checkout"}]},  # metadata dropped
            history[1],
            history[2],
        ],
        "system": [{"text": "You are an SRE."}],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "restart_service",
                        "description": "Restart a service.",
                        "inputSchema": {
                            "json": {
                                "additionalProperties": False,
                                "properties": {
                                    "service": {
                                        "description": "Name of the service.",
                                        "title": "Service",
                                        "type": "string",
                                    }
                                },
                                "required": ["service"],
                                "type": "object",
                            }
                        },
                    }
                },
                {"toolSpec": read_logs.spec},
            ]
        },
        "inferenceConfig": {"maxTokens": 512, "temperature": 0.0},
    }
    stubber.add_response("converse", _response(answer, "tool_use"), expected)
    model = BedrockModel(MODEL_ID, client=client, max_tokens=512, temperature=0.0)

    turn = model.converse(history, [restart.spec, read_logs.spec], "You are an SRE.")

    assert turn.stop_reason == "tool_use"
    assert turn.message == answer
    assert "metadata" in history[0]  # the caller's messages are not changed


def test_text_turn_without_tools_system_or_inference_config(client: Any, stubber: Any) -> None:
    answer = {"role": "assistant", "content": [{"text": "hello"}]}
    expected = {"modelId": MODEL_ID, "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    stubber.add_response("converse", _response(answer, "end_turn"), expected)

    turn = BedrockModel(MODEL_ID, client=client).converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert turn.stop_reason == "end_turn"
    assert turn.message == answer


def test_strands_only_tool_use_keys_are_dropped(client: Any, stubber: Any) -> None:
    history: list[Message] = [
        {"role": "user", "content": [{"text": "go"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "x", "input": {}, "reasoningSignature": "sig"}}],
        },
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": []}}]},
    ]
    expected = {
        "modelId": MODEL_ID,
        "messages": [
            history[0],
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "x", "input": {}}}]},
            history[2],
        ],
    }
    stubber.add_response(
        "converse", _response({"role": "assistant", "content": [{"text": "ok"}]}, "end_turn"), expected
    )

    BedrockModel(MODEL_ID, client=client).converse(history, [], None)


@pytest.mark.parametrize(
    "stop_reason", ["max_tokens", "guardrail_intervened", "stop_sequence", "content_filtered", "end_turn"]
)
def test_stop_reasons_pass_through(client: Any, stubber: Any, stop_reason: str) -> None:
    stubber.add_response("converse", _response({"role": "assistant", "content": [{"text": "..."}]}, stop_reason))

    turn = BedrockModel(MODEL_ID, client=client).converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert turn.stop_reason == stop_reason


def test_throttling_becomes_model_error_naming_model_and_code(client: Any, stubber: Any) -> None:
    stubber.add_client_error(
        "converse", service_error_code="ThrottlingException", service_message="Too many requests", http_status_code=429
    )

    with pytest.raises(ModelError) as raised:
        BedrockModel(MODEL_ID, client=client).converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert isinstance(raised.value.__cause__, ClientError)
    assert "ThrottlingException" in str(raised.value)
    assert MODEL_ID in str(raised.value)


def test_client_side_validation_error_becomes_model_error(client: Any) -> None:
    # botocore refuses a block Bedrock does not know before sending anything: a BotoCoreError.
    # (A queued response lets the stubber pass the call on to botocore's validation.)
    stubber = Stubber(client)
    stubber.add_response("converse", _response({"role": "assistant", "content": []}, "end_turn"))
    stubber.activate()
    unknown_block: Any = {"text": "hi", "bogus": 1}
    messages: list[Message] = [{"role": "user", "content": [unknown_block]}]

    with pytest.raises(ModelError, match="ParamValidationError") as raised:
        BedrockModel(MODEL_ID, client=client).converse(messages, [], None)

    assert raised.value.__cause__ is not None
    assert MODEL_ID in str(raised.value)
    stubber.deactivate()


class _FakeClient:
    def __init__(self, response: Any) -> None:
        self.response = response

    def converse(self, **_: Any) -> Any:
        return self.response


@pytest.mark.parametrize(
    "response",
    [
        {},
        {"output": {}, "stopReason": "end_turn"},
        {"output": {"message": {"role": "assistant", "content": []}}},
        {"output": {"message": {"role": "user", "content": []}}, "stopReason": "end_turn"},
        {"output": {"message": {"role": "assistant", "content": "x"}}, "stopReason": "end_turn"},
        None,
    ],
)
def test_malformed_response_becomes_model_error(response: Any) -> None:
    model = BedrockModel(MODEL_ID, client=_FakeClient(response))

    with pytest.raises(ModelError, match="MalformedResponse") as raised:
        model.converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert raised.value.__cause__ is not None
    assert MODEL_ID in str(raised.value)


def test_agent_interrupts_on_gated_tool_and_resume_runs_it_without_a_model_call(client: Any, stubber: Any) -> None:
    recorder = Recorder()
    tools = recorder.tools()
    specs = [{"toolSpec": agent_tool.spec} for agent_tool in tools]
    prompt = {"role": "user", "content": [{"text": "restart checkout"}]}
    ask = {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t1", "name": "restart_service", "input": {"service": "checkout"}}}],
    }
    result = {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "restarted checkout"}]}}
        ],
    }
    done_message = {"role": "assistant", "content": [{"text": "checkout restarted"}]}
    stubber.add_response(
        "converse",
        _response(ask, "tool_use"),
        {
            "modelId": MODEL_ID,
            "messages": [prompt],
            "system": [{"text": "Be careful."}],
            "toolConfig": {"tools": specs},
        },
    )
    stubber.add_response(
        "converse",
        _response(done_message, "end_turn"),
        {
            "modelId": MODEL_ID,
            "messages": [prompt, ask, result],
            "system": [{"text": "Be careful."}],
            "toolConfig": {"tools": specs},
        },
    )
    agent = Agent(
        BedrockModel(MODEL_ID, client=client),
        tools,
        hooks=[ApprovalGate(["restart_service"])],
        system_prompt="Be careful.",
    )

    stopped = agent("restart checkout")

    assert stopped.stop_reason == "interrupt"
    [interrupt] = stopped.interrupts
    assert interrupt.reason == {
        "tool": "restart_service",
        "input": {"service": "checkout"},
        "toolUseId": "t1",
        "response": "record",
    }
    assert recorder.calls == []

    done = agent([respond(interrupt.id, decision("approve"))])

    assert done.stop_reason == "end_turn"
    assert str(done) == "checkout restarted"
    assert recorder.calls == [("restart_service", "checkout")]
    assert tool_results(agent.messages[-2])["t1"]["status"] == "success"
    stubber.assert_no_pending_responses()  # exactly two converse calls: the resume replayed without one
