"""The agent loop (``agent.agent``) raising and resuming interrupts: hook gates, tool interrupts, batches, partial and
falsy answers, errors, one invocation at a time."""

import asyncio
import threading
import uuid
from typing import Any

import pytest

from agent import Agent, ApprovalGate, BeforeToolCallEvent, BeforeToolsEvent, HookRegistry, ScriptedModel
from agent.models.scripted import text_turn, tool_turn
from tests.agent.support import Recorder, decision, respond, restart_checkout_asked, tool_results


def _oid(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_OID, name)


def test_hook_interrupt_stops_before_the_tool_and_resume_runs_it_without_calling_the_model() -> None:
    recorder = Recorder()
    model = ScriptedModel([tool_turn(("t1", "restart_service", {"service": "checkout"})), text_turn("restarted")])
    agent = Agent(model, recorder.tools(), hooks=[ApprovalGate(["restart_service"])])

    stopped = agent("restart checkout")

    assert stopped.stop_reason == "interrupt"
    [interrupt] = stopped.interrupts
    assert interrupt.id == f"v1:before_tool_call:t1:{_oid('approval')}"
    schema = interrupt.reason.pop("inputSchema")  # the tool's schema travels along, for an approver's edit form
    assert schema["properties"]["service"]["type"] == "string"
    assert interrupt.reason == restart_checkout_asked("t1")
    assert recorder.calls == []
    assert agent.messages[-1]["content"][0]["toolUse"]["toolUseId"] == "t1"  # the toolUse message stays last
    assert agent.interrupted

    done = agent([respond(interrupt.id, decision("approve"))])

    assert done.stop_reason == "end_turn"
    assert str(done) == "restarted"
    assert recorder.calls == [("restart_service", "checkout")]
    assert model.calls == 2  # the first call asked for the tool, the second answered; the resume made none
    assert tool_results(agent.messages[-2])["t1"]["status"] == "success"
    assert not agent.interrupted
    assert agent._interrupt_state.to_dict() == {"interrupts": {}, "context": {}, "activated": False}


def test_tool_interrupt_reruns_the_tool_from_its_start_and_interrupt_returns_the_answer() -> None:
    recorder = Recorder()
    model = ScriptedModel([tool_turn(("t1", "delete_volume", {"volume": "vol-9"})), text_turn("ok")])
    agent = Agent(model, recorder.tools())

    stopped = agent("delete vol-9")
    [interrupt] = stopped.interrupts
    assert interrupt.id == f"v1:tool_call:t1:{_oid('confirm_delete')}"
    assert interrupt.reason == {"volume": "vol-9"}
    assert recorder.calls == [("delete_volume:start", "vol-9")]

    agent([respond(interrupt.id, "yes")])

    assert recorder.calls == [
        ("delete_volume:start", "vol-9"),
        ("delete_volume:start", "vol-9"),
        ("delete_volume", "yes"),
    ]
    assert tool_results(agent.messages[-2])["t1"]["content"] == [{"text": "deleted vol-9"}]


@pytest.mark.parametrize("falsy", [False, 0, "", [], {}])
def test_falsy_answers_are_answers(falsy: Any) -> None:
    recorder = Recorder()
    model = ScriptedModel([tool_turn(("t1", "delete_volume", {"volume": "v"})), text_turn("ok")])
    agent = Agent(model, recorder.tools())
    [interrupt] = agent("delete").interrupts

    result = agent([respond(interrupt.id, falsy)])

    assert result.stop_reason == "end_turn"
    assert recorder.calls[-1] == ("delete_volume", falsy)
    assert tool_results(agent.messages[-2])["t1"]["content"] == [{"text": "kept v"}]


# A batch whose second call (delete_volume) asks inside the tool, after a plain read_logs has run.
_READ_THEN_ASKING_DELETE: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("t1", "read_logs", {"service": "a"}),
    ("t2", "delete_volume", {"volume": "v"}),
)


def test_sequential_batch_stops_at_the_first_interrupt_and_runs_the_rest_on_resume() -> None:
    recorder = Recorder()
    batch = tool_turn(*_READ_THEN_ASKING_DELETE, ("t3", "read_logs", {"service": "b"}))
    model = ScriptedModel([batch, text_turn("ok")])
    agent = Agent(model, recorder.tools())

    stopped = agent("go")

    assert recorder.names() == ["read_logs", "delete_volume:start"]  # t3 did not start
    pending = agent._interrupt_state.pending_tool_execution
    assert pending is not None
    assert [result["toolUseId"] for result in pending.completed_tool_results] == ["t1"]

    agent([respond(stopped.interrupts[0].id, True)])

    assert recorder.names() == ["read_logs", "delete_volume:start", "delete_volume:start", "delete_volume", "read_logs"]
    assert set(tool_results(agent.messages[-2])) == {"t1", "t2", "t3"}


def test_concurrent_batch_lets_other_tools_finish_and_never_reruns_them() -> None:
    recorder = Recorder()
    batch = tool_turn(*_READ_THEN_ASKING_DELETE, ("t3", "restart_service", {"service": "b"}))
    agent = Agent(ScriptedModel([batch, text_turn("ok")]), recorder.tools(), concurrent_tools=True)

    stopped = agent("go")

    assert sorted(recorder.names()) == ["delete_volume:start", "read_logs", "restart_service"]
    pending = agent._interrupt_state.pending_tool_execution
    assert pending is not None
    assert {result["toolUseId"] for result in pending.completed_tool_results} == {"t1", "t3"}

    agent([respond(stopped.interrupts[0].id, True)])

    assert recorder.names().count("read_logs") == 1
    assert recorder.names().count("restart_service") == 1
    assert set(tool_results(agent.messages[-2])) == {"t1", "t2", "t3"}


def test_partial_answers_report_only_the_unanswered_interrupts() -> None:
    recorder = Recorder()
    batch = tool_turn(("t1", "restart_service", {"service": "a"}), ("t2", "restart_service", {"service": "b"}))
    model = ScriptedModel([batch, text_turn("ok")])
    agent = Agent(model, recorder.tools(), hooks=[ApprovalGate(["restart_service"])], concurrent_tools=True)
    first = agent("restart both")
    ids = {interrupt.reason["toolUseId"]: interrupt.id for interrupt in first.interrupts}
    assert set(ids) == {"t1", "t2"}

    second = agent([respond(ids["t1"], decision("approve"))])

    assert second.stop_reason == "interrupt"
    assert [interrupt.id for interrupt in second.interrupts] == [ids["t2"]]
    assert recorder.calls == [("restart_service", "a")]
    assert model.calls == 1

    agent([respond(ids["t2"], decision("approve"))])

    assert recorder.calls == [("restart_service", "a"), ("restart_service", "b")]
    assert model.calls == 2


def test_an_empty_resume_list_raises_the_same_interrupts_again_without_calling_the_model() -> None:
    recorder = Recorder()
    model = ScriptedModel([tool_turn(("t1", "restart_service", {"service": "a"}))])
    agent = Agent(model, recorder.tools(), hooks=[ApprovalGate(["restart_service"])])
    first = agent("go")

    again = agent([])

    assert again.stop_reason == "interrupt"
    assert [interrupt.id for interrupt in again.interrupts] == [interrupt.id for interrupt in first.interrupts]
    assert model.calls == 1
    assert recorder.calls == []


def test_resume_errors_keep_the_agent_interrupted() -> None:
    agent = Agent(
        ScriptedModel([tool_turn(("t1", "restart_service", {"service": "a"}))]),
        Recorder().tools(),
        hooks=[ApprovalGate(["restart_service"])],
    )
    agent("go")

    with pytest.raises(KeyError, match=r"interrupt_id=<v1:nope> \| no interrupt found"):
        agent([respond("v1:nope", decision("approve"))])
    with pytest.raises(TypeError, match="prompt_type="):
        agent("approve it")
    with pytest.raises(TypeError, match="content_types="):
        agent([{"text": "approve"}])
    assert agent.interrupted


def test_responses_sent_to_an_agent_that_is_not_interrupted_raise_value_error() -> None:
    agent = Agent(ScriptedModel([text_turn("hi")]), [])
    with pytest.raises(ValueError, match="agent is not in interrupt state"):
        agent([respond("v1:before_tools:x", True)])
    assert agent.messages == []


def test_several_hook_callbacks_each_raise_their_interrupt_in_one_dispatch() -> None:
    def first(event: BeforeToolsEvent) -> None:
        event.interrupt("security_review")

    def second(event: BeforeToolsEvent) -> None:
        event.interrupt("cost_review", reason="expensive")

    class Provider:
        def register_hooks(self, hooks: HookRegistry) -> None:
            hooks.add_callback(BeforeToolsEvent, first)
            hooks.add_callback(BeforeToolsEvent, second)

    agent = Agent(
        ScriptedModel([tool_turn(("t1", "read_logs", {"service": "a"}))]), Recorder().tools(), hooks=[Provider()]
    )
    result = agent("go")

    assert [interrupt.name for interrupt in result.interrupts] == ["security_review", "cost_review"]
    assert [interrupt.id for interrupt in result.interrupts] == [
        f"v1:before_tools:{_oid('security_review')}",
        f"v1:before_tools:{_oid('cost_review')}",
    ]


def test_the_same_interrupt_name_twice_in_one_dispatch_is_a_value_error() -> None:
    class Twice:
        def register_hooks(self, hooks: HookRegistry) -> None:
            for _ in range(2):
                hooks.add_callback(BeforeToolCallEvent, lambda event: event.interrupt("approval"))

    agent = Agent(
        ScriptedModel([tool_turn(("t1", "read_logs", {"service": "a"}))]), Recorder().tools(), hooks=[Twice()]
    )
    with pytest.raises(ValueError, match=r"interrupt_name=<approval> \| interrupt name used more than once"):
        agent("go")


def test_the_async_twin_interrupts_and_resumes_like_the_sync_call() -> None:
    recorder = Recorder()
    model = ScriptedModel([tool_turn(("t1", "restart_service", {"service": "a"})), text_turn("done")])
    agent = Agent(model, recorder.tools(), hooks=[ApprovalGate(["restart_service"])])

    async def run() -> tuple[str, str]:
        stopped = await agent.invoke_async("restart a")
        done = await agent.invoke_async([respond(stopped.interrupts[0].id, decision("approve"))])
        return stopped.stop_reason, done.stop_reason

    assert asyncio.run(run()) == ("interrupt", "end_turn")
    assert recorder.calls == [("restart_service", "a")]
    assert model.calls == 2


def test_one_invocation_at_a_time() -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(messages: list[Any]) -> Any:
        entered.set()
        release.wait(5)
        return text_turn("slow answer")

    agent = Agent(ScriptedModel(slow), [])
    worker = threading.Thread(target=agent, args=("first",))
    worker.start()
    assert entered.wait(5)
    with pytest.raises(RuntimeError, match="already running"):
        agent("second")
    release.set()
    worker.join(5)
    assert [message["role"] for message in agent.messages] == ["user", "assistant"]


def test_a_concurrent_batch_reports_its_interrupts_in_the_order_of_its_calls_whichever_asks_first() -> None:
    first_may_ask = threading.Event()

    class SlowFirst:
        """Holds the first call's hook until the second call has asked."""

        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add_callback(BeforeToolCallEvent, self.ask)

        def ask(self, event: BeforeToolCallEvent) -> None:
            if event.tool_use["toolUseId"] == "t1":
                assert first_may_ask.wait(10)
            else:
                first_may_ask.set()
            event.interrupt(f"approve-{event.tool_use['toolUseId']}", reason="risky")

    batch = tool_turn(("t1", "restart_service", {"service": "a"}), ("t2", "restart_service", {"service": "b"}))
    recorder = Recorder()
    agent = Agent(ScriptedModel([batch, text_turn("ok")]), recorder.tools(), hooks=[SlowFirst()], concurrent_tools=True)
    stopped = agent("go")
    assert [interrupt.name for interrupt in stopped.interrupts] == ["approve-t1", "approve-t2"]
