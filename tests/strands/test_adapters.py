"""``bot.flow.agent_adapters.as_runnable``: our agent as it is, a Strands agent wrapped, anything else refused."""

from typing import Any

import pytest
import redis
import strands

from agent.demo import build_operations_agent
from agent.models.scripted import text_turn, tool_turn
from agent.strands_bridge import StrandsRunnable
from bot.flow.agent_adapters import as_runnable
from state import SessionStore
from tests.strands.agents import StrandsScriptedModel, completions, native_agent, strands_operations_agent

SID = "T0TEST:C0OPS:1700000000.000300"


def test_our_agent_is_returned_as_it_is() -> None:
    ours = build_operations_agent()
    assert as_runnable(ours) is ours


def test_a_strands_agent_is_wrapped(store: SessionStore) -> None:
    runnable: Any = as_runnable(strands_operations_agent(session_id=SID, store=store))
    assert isinstance(runnable, StrandsRunnable)
    assert as_runnable(runnable) is runnable


@pytest.mark.parametrize("candidate", [object(), "agent", None])
def test_anything_else_is_refused(candidate: Any) -> None:
    with pytest.raises(TypeError, match="AGENT_FACTORY must return"):
        as_runnable(candidate)


def test_a_strands_object_that_is_not_an_agent_is_refused() -> None:
    from agent import ScriptedModel

    with pytest.raises(TypeError, match=r"not a strands\.Agent"):
        as_runnable(StrandsScriptedModel(ScriptedModel([])))


def test_state_set_before_a_run_is_persisted_with_it(redis_client: redis.Redis, store: SessionStore) -> None:
    runnable: Any = as_runnable(strands_operations_agent(session_id=SID, store=store))
    runnable.state.set("signoff_prompt_ids", ["p1"])
    runnable("logs for api")

    again: Any = as_runnable(strands_operations_agent(session_id=SID, store=store))
    assert again.state.get("signoff_prompt_ids") == ["p1"]
    stored = store.load(SID)
    assert stored is not None
    assert stored.agent_state == {"signoff_prompt_ids": ["p1"]}
    assert completions(redis_client, "read_logs") == 1


def test_continue_runs_a_trailing_tool_call_without_asking_the_model(redis_client: redis.Redis) -> None:
    """A worker died after the model asked for a free tool: ``agent()`` runs it, then the model answers."""
    from agent import ScriptedModel

    store = SessionStore(redis_client)
    calls: list[str] = []

    @strands.tool
    def read_logs(service: str) -> str:
        """Read logs."""
        calls.append(service)
        return "ok"

    def build(turns: list[Any]) -> Any:
        return native_agent(ScriptedModel(turns), [read_logs], session=(SID, store))

    first = build([])
    first.messages.append({"role": "user", "content": [{"text": "logs for api"}]})
    first.messages.append(tool_turn(("t1", "read_logs", {"service": "api"})).message)
    for message in first.messages:  # what a session manager wrote before the crash
        first._session_manager.append_message(message, first)

    rebuilt = build([text_turn("api looks fine")])
    result = as_runnable(rebuilt)()
    assert (result.stop_reason, str(result)) == ("end_turn", "api looks fine")
    assert calls == ["api"]
    assert rebuilt.model.calls == 1
