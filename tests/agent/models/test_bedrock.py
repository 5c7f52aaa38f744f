"""BedrockModel's requests: the exact ``converse`` parameters a real bedrock-runtime client is given (botocore's own
``Stubber`` checks them), and botocore's own validation.

What every provider does alike (stop reasons, failures, malformed answers, the approval round trip) is in
``test_base.py``.
"""

from typing import Any

import pytest
from botocore.stub import Stubber  # type: ignore[import-untyped]

from agent import ModelError
from agent.models.bedrock import BedrockModel
from state.shapes import Message
from tests.agent.providers import BEDROCK_MODEL, BedrockDouble, bedrock_client, converse_answer
from tests.agent.support import Recorder


def test_tool_use_turn_sends_exact_converse_request(bedrock: BedrockDouble) -> None:
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
        "modelId": BEDROCK_MODEL,
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
    bedrock.reply(answer, "tool_use", expected)
    model = BedrockModel(BEDROCK_MODEL, client=bedrock.client, max_tokens=512, temperature=0.0)

    turn = model.converse(history, [restart.spec, read_logs.spec], "You are an SRE.")

    assert turn.stop_reason == "tool_use"
    assert turn.message == answer
    assert "metadata" in history[0]  # the caller's messages are not changed


def test_a_turn_without_settings_sends_only_the_model_and_the_messages(bedrock: BedrockDouble) -> None:
    expected = {"modelId": BEDROCK_MODEL, "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    bedrock.reply({"role": "assistant", "content": [{"text": "hello"}]}, "end_turn", expected)

    turn = bedrock.model().converse([{"role": "user", "content": [{"text": "hi"}]}], [], None)

    assert turn.stop_reason == "end_turn"


def test_strands_only_tool_use_keys_are_dropped(bedrock: BedrockDouble) -> None:
    history: list[Message] = [
        {"role": "user", "content": [{"text": "go"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t1", "name": "x", "input": {}, "reasoningSignature": "sig"}}],
        },
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": []}}]},
    ]
    expected = {
        "modelId": BEDROCK_MODEL,
        "messages": [
            history[0],
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "x", "input": {}}}]},
            history[2],
        ],
    }
    bedrock.reply({"role": "assistant", "content": [{"text": "ok"}]}, "end_turn", expected)

    BedrockModel(BEDROCK_MODEL, client=bedrock.client).converse(history, [], None)


def test_client_side_validation_error_becomes_model_error() -> None:
    # botocore refuses a block Bedrock does not know before sending anything: a BotoCoreError.
    # (A queued response lets the stubber pass the call on to botocore's validation; it is never used.)
    client = bedrock_client()
    unknown_block: Any = {"text": "hi", "bogus": 1}
    messages: list[Message] = [{"role": "user", "content": [unknown_block]}]

    with Stubber(client) as stubber:
        stubber.add_response("converse", converse_answer({"role": "assistant", "content": []}, "end_turn"))
        with pytest.raises(ModelError, match="ParamValidationError") as raised:
            BedrockModel(BEDROCK_MODEL, client=client).converse(messages, [], None)

    assert raised.value.__cause__ is not None
    assert BEDROCK_MODEL in str(raised.value)
