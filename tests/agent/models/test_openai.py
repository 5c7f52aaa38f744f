"""OpenAIChatModel's requests and answers: the exact chat completions body the real ``openai`` SDK sends, and what only
chat completions can answer (tool calls with ``stop``, tool arguments that are not JSON).

What every provider does alike (stop reasons, failures, malformed answers, the approval round trip) is in
``test_base.py``.
"""

import json

import pytest

from agent.models.base import ModelError
from tests.agent.providers import RESTART_SPEC as SPEC
from tests.agent.providers import OpenAIDouble, tool_call


def test_tool_use_round_trip_sends_converted_messages_and_reads_the_tool_call(openai_api: OpenAIDouble) -> None:
    call = tool_call("call_2", "restart_service", '{"service": "cart"}')
    openai_api.reply({"role": "assistant", "content": "Restarting again.", "tool_calls": [call]}, "tool_calls")
    request = openai_api.converse_the_restarts("call")

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
                    tool_call("call_1", "restart_service", json.dumps({"service": "checkout"})),
                    tool_call("call_9", "restart_service", json.dumps({"service": "x"})),
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "restarted"},
            {"role": "tool", "tool_call_id": "call_9", "content": 'Error: {"code": 404}'},
        ],
    }


def test_a_text_only_conversation_is_sent_as_plain_strings(openai_api: OpenAIDouble) -> None:
    openai_api.answer_text("All good.")

    openai_api.model().converse([{"role": "user", "content": [{"text": "status?"}]}], [], None)

    assert openai_api.sent(0) == {"model": "gpt-test", "messages": [{"role": "user", "content": "status?"}]}


def test_tool_calls_reported_with_stop_are_tool_use(openai_api: OpenAIDouble) -> None:
    call = tool_call("c1", "restart_service", '{"service": "a"}')
    openai_api.reply({"role": "assistant", "content": None, "tool_calls": [call]}, "stop")

    turn = openai_api.model().converse([{"role": "user", "content": [{"text": "hi"}]}], [SPEC], None)

    assert turn.stop_reason == "tool_use"
    assert turn.message["content"] == [
        {"toolUse": {"toolUseId": "c1", "name": "restart_service", "input": {"service": "a"}}}
    ]


@pytest.mark.parametrize("arguments", ['{"service": ', "[1, 2]"])
def test_malformed_tool_arguments_become_model_error(openai_api: OpenAIDouble, arguments: str) -> None:
    call = tool_call("c1", "restart_service", arguments)
    openai_api.reply({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")

    with pytest.raises(ModelError, match=OpenAIDouble.error_names) as raised:
        openai_api.model().converse([{"role": "user", "content": [{"text": "hi"}]}], [SPEC], None)

    assert isinstance(raised.value.__cause__, ValueError)
