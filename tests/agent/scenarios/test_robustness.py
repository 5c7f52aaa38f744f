"""The loop under stress: new prompts after unfinished batches, errors mid-cycle, bad shapes, failed saves."""

from typing import Any

import pytest

from agent import Agent, BeforeInvocationEvent, HookRegistry, ModelError, ScriptedModel
from agent.models.base import ModelTurn
from agent.models.scripted import text_turn, tool_turn
from agent.session import AgentState, SessionBinding
from state import SessionStore, ShapeError
from state.interrupt import _AGENT_STREAM_INTERRUPT_ID_PREFIX
from state.shapes import Message
from tests.agent.support import Recorder, WorkerDied, respond


def test_a_new_prompt_after_an_unfinished_batch_first_answers_every_call(store: SessionStore) -> None:
    recorder = Recorder()
    tools = recorder.tools()
    batch = tool_turn(("t1", "read_logs", {"service": "a"}), ("t2", "restart_service", {"service": "b"}))

    def dies(service: str) -> str:
        raise WorkerDied

    first = Agent(ScriptedModel([batch]), tools, session_id="s-new", store=store)
    first.tools["restart_service"].func = dies  # the process dies inside the second call
    with pytest.raises(WorkerDied):
        first("go")

    seen: list[list[Message]] = []

    def answer(messages: list[Message]) -> Any:
        seen.append(list(messages))
        return text_turn("ok")

    rebuilt = Agent(ScriptedModel(answer), recorder.tools(), session_id="s-new", store=store)
    rebuilt("something else")

    roles = [(message["role"], next(iter(message["content"][0]))) for message in seen[0]]
    assert roles == [("user", "text"), ("assistant", "toolUse"), ("user", "toolResult"), ("user", "text")]
    results = {block["toolResult"]["toolUseId"]: block["toolResult"] for block in seen[0][2]["content"]}
    assert results["t1"]["status"] == "success"  # completed before the crash: kept
    assert results["t2"]["status"] == "error"  # died inside: reported as possibly run, not as not run
    assert "may have run" in results["t2"]["content"][0]["text"]
    assert recorder.names() == ["read_logs"]  # nothing re-ran


def test_an_error_ends_the_interrupt_cycle_so_a_run_gate_is_asked_again() -> None:
    class RunGate:
        def register_hooks(self, hooks: HookRegistry) -> None:
            hooks.add_callback(BeforeInvocationEvent, lambda event: event.interrupt("approve_run"))

    def failing(messages: list[Message]) -> Any:
        raise ModelError("provider=<test> | down")

    agent = Agent(ScriptedModel(failing), [], hooks=[RunGate()])
    [gate] = agent("run #1").interrupts
    with pytest.raises(ModelError):
        agent([respond(gate.id, "yes")])

    assert not [key for key in agent._interrupt_state.interrupts if key.startswith(_AGENT_STREAM_INTERRUPT_ID_PREFIX)]
    assert agent("run #2").stop_reason == "interrupt"  # asked again: no standing approval


@pytest.mark.parametrize(
    "prompt",
    [
        [{}],
        [{"text": "a", "image": {"format": "png"}}],
        [{"text": "a"}, {"role": "user", "content": [{"text": "a message where a block belongs"}]}],
    ],
)
def test_malformed_prompt_blocks_are_refused_before_anything_is_stored(store: SessionStore, prompt: Any) -> None:
    agent = Agent(ScriptedModel([text_turn("never")]), [], session_id="s-bad", store=store)
    with pytest.raises(ShapeError):
        agent(prompt)
    assert store.load("s-bad") is None
    assert agent.messages == []


def test_a_list_of_messages_is_accepted_as_a_prompt() -> None:
    agent = Agent(ScriptedModel([text_turn("hi both")]), [])
    agent([{"role": "user", "content": [{"text": "first"}]}, {"role": "user", "content": [{"text": "second"}]}])
    assert [message["content"][0]["text"] for message in agent.messages] == ["first", "second", "hi both"]


def test_a_failed_save_leaves_memory_equal_to_redis(store: SessionStore) -> None:
    bad: Message = {"role": "assistant", "content": [{"text": 42}]}  # type: ignore[typeddict-item]
    agent = Agent(ScriptedModel([ModelTurn(bad, "end_turn")]), [], session_id="s-div", store=store)
    with pytest.raises(ValueError, match="refusing to store"):
        agent("hello")
    stored = store.load("s-div")
    assert stored is not None
    assert agent.messages == stored.messages


def test_deleting_a_state_key_holding_none_is_saved(store: SessionStore) -> None:
    binding = SessionBinding(store, "s-none")
    messages, state, interrupts = binding.load()
    state.set("flag", None)
    binding.save(messages, state, interrupts)
    state.delete("flag")
    assert binding.save(messages, state, interrupts) is True
    reloaded = SessionBinding(store, "s-none").load()[1]
    assert isinstance(reloaded, AgentState)
    assert "flag" not in reloaded.to_dict()
