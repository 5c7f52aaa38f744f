"""AnthropicModel's requests: the exact Messages API body the real ``anthropic`` SDK sends for a conversation.

What every provider does alike (stop reasons, failures, malformed answers, the approval round trip) is in
``test_base.py``.
"""

from tests.agent.providers import RESTART_SPEC as SPEC
from tests.agent.providers import AnthropicDouble


def test_tool_use_round_trip_sends_converted_messages_and_reads_the_tool_call(anthropic_api: AnthropicDouble) -> None:
    anthropic_api.reply(
        [
            {"type": "text", "text": "Restarting again."},
            {"type": "tool_use", "id": "toolu_2", "name": "restart_service", "input": {"service": "cart"}},
        ],
        "tool_use",
    )
    request = anthropic_api.converse_the_restarts("toolu")

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
