"""whatever an interrupt's reason holds, the request is posted (issue 10.5 and its cousins)."""

from typing import Any

import pytest
import redis

from agent import Agent, BeforeToolCallEvent, HookRegistry, tool
from agent.models.scripted import ScriptedModel, text_turn, tool_turn
from tests.bot.support.harness import running_bot

REASONS: dict[str, Any] = {
    "tool_int": {"tool": 5},
    "tool_dict": {"tool": {"name": "x"}},
    "input_str": {"tool": "deploy", "input": "not a dict"},
    "policy_int": {"policy": 7, "tool": "deploy"},
    "response_list": {"response": ["yes_no"]},
    "tool_use_id_list": {"toolUseId": [1]},
    "attempts_str": {"attempts": "many"},
    "big_int": {"n": 10**400},
    "float_nan_key": {"nan": float("nan")},
    "list_reason": [1, 2, 3],
    "number_reason": 3.5,
    "bool_reason": True,
}


def _factory(reason: Any) -> Any:
    def factory(*, session_id: str, store: Any) -> Agent:
        @tool
        def deploy(service: str) -> str:
            """Deploy."""
            return "deployed"

        def gate(event: BeforeToolCallEvent) -> None:
            event.interrupt("deploy_gate", reason=reason)

        class Provider:
            def register_hooks(self, hooks: HookRegistry) -> None:
                hooks.add_callback(BeforeToolCallEvent, gate)

        def respond(messages: list[Any]) -> Any:
            has_results = any("toolResult" in block for block in messages[-1]["content"])
            return text_turn("done") if has_results else tool_turn(("t1", "deploy", {"service": "api"}))

        return Agent(ScriptedModel(respond), [deploy], hooks=[Provider()], session_id=session_id, store=store)

    return factory


@pytest.mark.parametrize("name", sorted(REASONS))
def test_any_reason_shape_is_posted(redis_client: redis.Redis, name: str) -> None:
    with running_bot(redis_client, agent_factory=_factory(REASONS[name])) as bot:
        bot.mention("deploy")
        bot.drain()
        assert bot.approval_messages(), bot.texts_posted()
