"""``MultiAgentRunnable``: a Strands Swarm or Graph with the interface the bot's runner drives.

Each step builds the orchestrator again from Redis, as the bot's worker does for every job.
"""

from typing import Any

import pytest
import redis
import strands
from strands.multiagent import Swarm

from agent import ScriptedModel
from agent.strands_bridge import MultiAgentRunnable
from bot.flow.agent_adapters import as_runnable
from state import SessionStore
from tests.agent.support import WorkerDied
from tests.redis_targets import on_both
from tests.strands.agents import Factory, StrandsScriptedModel
from tests.strands.multi_agents import (
    completions,
    graph_node_gate_agent,
    graph_tool_agent,
    swarm_node_gate_agent,
    swarm_tool_agent,
)

# The orchestrator's records and the mirror are written together under the session's hash tag: on a cluster too.
pytest_generate_tests = on_both

SID = "T0TEST:C0OPS:1700000000.000500"
TOOL_ASKS = pytest.mark.parametrize("factory", [swarm_tool_agent, graph_tool_agent], ids=["swarm", "graph"])


def _runnable(factory: Factory, store: SessionStore) -> Any:
    return as_runnable(factory(session_id=SID, store=store))


def _approve(interrupt_id: str, response: Any = True) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": interrupt_id, "response": response}}]


@TOOL_ASKS
def test_a_swarm_or_graph_is_wrapped(store: SessionStore, factory: Factory) -> None:
    runnable = _runnable(factory, store)
    assert isinstance(runnable, MultiAgentRunnable)
    assert as_runnable(runnable) is runnable


def test_one_not_persisted_by_signoff_is_refused_with_what_to_do() -> None:
    node = strands.Agent(name="solo", model=StrandsScriptedModel(ScriptedModel([])), callback_handler=None)
    with pytest.raises(TypeError, match=r"session_manager=signoff_session_manager\(session_id, store\)"):
        as_runnable(Swarm(nodes=[node]))


@TOOL_ASKS
def test_the_call_an_interrupt_raised_in_a_node_guards(store: SessionStore, factory: Factory) -> None:
    result = _runnable(factory, store)("delete /tmp/a")
    assert result.stop_reason == "interrupt"
    [interrupt] = result.interrupts
    assert interrupt.id.startswith("v1:tool_call:t1:")

    rebuilt = _runnable(factory, store)
    assert rebuilt.interrupted
    assert [pending.id for pending in rebuilt.pending_interrupts] == [interrupt.id]
    assert rebuilt.pending_tool_uses == [{"toolUseId": "t1", "name": "delete_files", "input": {"paths": ["/tmp/a"]}}]


@pytest.mark.parametrize("factory", [swarm_node_gate_agent, graph_node_gate_agent], ids=["swarm", "graph"])
def test_an_interrupt_raised_before_a_node_runs_guards_no_call(store: SessionStore, factory: Factory) -> None:
    _runnable(factory, store)("delete /tmp/a")
    rebuilt = _runnable(factory, store)
    assert [interrupt.name for interrupt in rebuilt.pending_interrupts] == ["cleanup-approval"]
    assert rebuilt.pending_tool_uses == []


@TOOL_ASKS
def test_state_and_transcript_are_written_with_the_orchestrator(
    redis_client: redis.Redis, store: SessionStore, factory: Factory
) -> None:
    first = _runnable(factory, store)
    first.state.set("signoff_prompt_ids", ["p1"])
    [interrupt] = first("delete /tmp/a").interrupts

    resumed = _runnable(factory, store)
    assert resumed.state.get("signoff_prompt_ids") == ["p1"]
    assert resumed.messages == [{"role": "user", "content": [{"text": "delete /tmp/a"}]}]
    result = resumed(_approve(interrupt.id))
    assert (result.stop_reason, str(result)) == ("end_turn", "deleted /tmp/a")

    transcript = [
        {"role": "user", "content": [{"text": "delete /tmp/a"}]},
        {"role": "assistant", "content": [{"text": "deleted /tmp/a"}]},
    ]
    assert _runnable(factory, store).messages == transcript
    stored = store.load(SID)
    assert stored is not None
    assert (stored.messages, stored.agent_state, stored.interrupted) == (
        transcript,
        {"signoff_prompt_ids": ["p1"]},
        False,
    )
    assert completions(redis_client, "delete_files") == 1


@TOOL_ASKS
def test_prompts_and_responses_go_where_they_can(store: SessionStore, factory: Factory) -> None:
    idle = _runnable(factory, store)
    with pytest.raises(ValueError, match="nothing is interrupted"):
        idle(_approve("v1:tool_call:t1:x"))
    assert idle().stop_reason == "end_turn"  # nothing to continue

    idle("delete /tmp/a")
    waiting = _runnable(factory, store)
    with pytest.raises(TypeError, match="interruptResponse"):
        waiting("delete /tmp/b")
    assert waiting.messages == [{"role": "user", "content": [{"text": "delete /tmp/a"}]}]


def _died_between_nodes(store: SessionStore) -> None:
    """Run ``delete /tmp/a`` on a Swarm whose worker dies as its second node starts (``triage`` was saved)."""
    dying = _runnable(swarm_tool_agent, store)

    def die(*args: Any, **kwargs: Any) -> Any:
        raise WorkerDied

    dying.orchestrator.nodes["cleaner"].executor.model.stream = die
    dying.state.set("signoff_prompt_ids", ["p1"])
    with pytest.raises(WorkerDied):
        dying("delete /tmp/a")


def test_a_run_that_died_between_nodes_continues_from_the_saved_node(store: SessionStore) -> None:
    _died_between_nodes(store)

    rebuilt = _runnable(swarm_tool_agent, store)
    assert not rebuilt.interrupted
    assert rebuilt.state.get("signoff_prompt_ids") == ["p1"]  # the runner sees its prompt was taken...
    assert rebuilt.messages[-1]["role"] == "user"  # ...and not answered: it continues
    result = rebuilt()

    assert result.stop_reason == "interrupt"
    assert rebuilt.pending_tool_uses[0]["input"] == {"paths": ["/tmp/a"]}
    assert [node.node_id for node in rebuilt.orchestrator.state.node_history] == ["triage"]  # not run again


def test_a_new_prompt_after_a_run_that_died_is_a_new_run(store: SessionStore) -> None:
    _died_between_nodes(store)

    rebuilt = _runnable(swarm_tool_agent, store)
    result = rebuilt("delete /tmp/b")

    assert result.stop_reason == "interrupt"
    assert rebuilt.pending_tool_uses[0]["input"] == {"paths": ["/tmp/b"]}  # not the frontier of the old run
    assert rebuilt.orchestrator.state.task == "delete /tmp/b"
