"""A refused call never runs, on every refusal path, and the model is told plainly why."""

from collections.abc import Callable
from typing import Any

import pytest

from agent import Agent, ApprovalGate, BeforeToolCallEvent, BeforeToolsEvent, HookRegistry, ScriptedModel
from agent.models.scripted import text_turn, tool_turn
from tests.agent.support import Recorder, decision, respond, tool_results


def _run_with_answer(response: Any) -> tuple[Recorder, str, ScriptedModel]:
    recorder = Recorder()
    model = ScriptedModel([tool_turn(("t1", "restart_service", {"service": "db"})), text_turn("understood")])
    agent = Agent(model, recorder.tools(), hooks=[ApprovalGate(["restart_service"])])
    [interrupt] = agent("restart db").interrupts
    agent([respond(interrupt.id, response)])
    result = tool_results(agent.messages[-2])["t1"]
    assert result["status"] == "error"
    return recorder, result["content"][0]["text"], model


def test_denied_call_never_runs_and_the_model_reads_who_and_why() -> None:
    recorder, text, model = _run_with_answer(decision("deny", by="U_ALICE", reason="peak traffic"))
    assert recorder.calls == []
    assert "denied by U_ALICE: peak traffic" in text
    assert "Do not retry" in text
    # The model's next call saw the refusal.
    assert model.seen[-1][-1]["content"][0]["toolResult"]["content"][0]["text"] == text


def test_expired_request_never_runs_and_is_not_reported_as_a_human_denial() -> None:
    recorder, text, _ = _run_with_answer(decision("expired", by=None))
    assert recorder.calls == []
    assert "expired without a decision" in text
    assert "denied" not in text


@pytest.mark.parametrize("response", ["yes", True, {"decision": "maybe"}, {"decision": "approve"}])
def test_an_answer_that_is_not_a_decision_fails_closed(response: Any) -> None:
    recorder, text, _ = _run_with_answer(response)
    assert recorder.calls == []
    assert "not understood" in text


def _cancel_each_call(event: BeforeToolCallEvent) -> None:
    event.cancel_tool = "blocked by change freeze"


def _cancel_the_batch(event: BeforeToolsEvent) -> None:
    event.cancel = True


@pytest.mark.parametrize(
    ("event_type", "callback", "expected"),
    [
        (BeforeToolCallEvent, _cancel_each_call, "blocked by change freeze"),
        (BeforeToolsEvent, _cancel_the_batch, "Not executed: the call was cancelled before it ran."),
    ],
)
def test_hook_cancel_refuses_every_call(event_type: type, callback: Callable[[Any], None], expected: str) -> None:
    class Cancel:
        def register_hooks(self, hooks: HookRegistry) -> None:
            hooks.add_callback(event_type, callback)

    recorder = Recorder()
    batch = tool_turn(("t1", "restart_service", {"service": "a"}), ("t2", "read_logs", {"service": "a"}))
    agent = Agent(ScriptedModel([batch, text_turn("ok")]), recorder.tools(), hooks=[Cancel()])

    assert agent("go").stop_reason == "end_turn"

    assert recorder.calls == []
    results = tool_results(agent.messages[-2])
    assert {tool_use_id: result["content"][0]["text"] for tool_use_id, result in results.items()} == {
        "t1": expected,
        "t2": expected,
    }


def test_unknown_tool_and_bad_input_become_error_results_naming_the_problem() -> None:
    recorder = Recorder()
    batch = tool_turn(("t1", "format_disk", {}), ("t2", "read_logs", {"service": "a", "lines": "many"}))
    agent = Agent(ScriptedModel([batch, text_turn("ok")]), recorder.tools())
    agent("go")

    results = tool_results(agent.messages[-2])
    assert results["t1"]["content"][0]["text"] == "Not executed: there is no tool named 'format_disk'."
    assert results["t2"]["content"][0]["text"].startswith("invalid input: field=<lines>")
    assert recorder.calls == []
