"""Invariant 4 (Once) in the agent runtime: an approved call runs at most once, whatever Redis or the worker does.

Redis stopped right after a tool returned: the result is saved once it is back and the tool ran once.
A worker dead between "started" and "recorded": the next run asks a human instead of running it again.
"""

from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from agent import AfterToolCallEvent, Agent, ApprovalGate, ScriptedModel, tool
from agent.attempts import RERUN_INTERRUPT, STARTED_CALLS
from agent.models.scripted import text_turn, tool_turn
from state import SessionStore
from state.shapes import Message
from tests.agent.support import WorkerDied, decision, respond, the_rerun_question, tool_results
from tests.outage import StopRedisAfterTool, TimedOutage


def _model() -> ScriptedModel:
    def respond_to(messages: list[Message]) -> Any:
        results = tool_results(messages[-1]) if messages[-1]["role"] == "user" else {}
        if not results:
            return tool_turn(("t1", "deploy", {"service": "api"}))
        return text_turn(results["t1"]["content"][0]["text"])

    return ScriptedModel(respond_to)


class _Deploys:
    """A gated ``deploy`` whose real executions are counted in memory (Redis may be down)."""

    def __init__(self, *, idempotent: bool = False) -> None:
        self.runs = 0
        self.crash_next = False
        self.idempotent = idempotent

    def agent(self, store: SessionStore, session_id: str, *, hooks: tuple[Any, ...] = ()) -> Agent:
        @tool(idempotent=self.idempotent)
        def deploy(service: str) -> str:
            """Deploy a service."""
            self.runs += 1
            if self.crash_next:
                self.crash_next = False
                raise WorkerDied  # it took effect, then the worker died before the result was recorded
            return f"deployed {service}"

        return Agent(_model(), [deploy], hooks=[ApprovalGate(["deploy"]), *hooks], session_id=session_id, store=store)


def _approve_first_request(deploys: _Deploys, store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    [gate] = deploys.agent(store, session_id)("deploy api").interrupts
    return [respond(gate.id, decision("approve"))]


def test_a_result_lost_to_a_redis_blip_is_saved_once_redis_is_back_and_the_tool_ran_once(
    outage: TimedOutage,
) -> None:
    # The client's own retries are off, so the outage reaches the result's save whatever its length.
    client = redis.Redis.from_url(outage.server.url, retry=Retry(NoBackoff(), 0))
    store = SessionStore(client)
    deploys = _Deploys()
    responses = _approve_first_request(deploys, store, "s-blip")

    result = deploys.agent(store, "s-blip", hooks=(StopRedisAfterTool(outage, AfterToolCallEvent),))(responses)

    assert outage.restarted.is_set()
    assert (result.stop_reason, str(result)) == ("end_turn", "deployed api")
    assert deploys.runs == 1
    stored = store.load("s-blip")
    assert stored is not None
    assert tool_results(stored.messages[-2])["t1"]["status"] == "success"
    assert STARTED_CALLS not in stored.agent_state
    # A redelivered job finds the run finished: nothing runs again.
    assert deploys.agent(store, "s-blip").interrupted is False
    assert deploys.runs == 1


@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_a_call_started_but_not_recorded_asks_a_human_instead_of_running_again(
    store: SessionStore, answer: str
) -> None:
    deploys = _Deploys()
    responses = _approve_first_request(deploys, store, "s-lost")
    deploys.crash_next = True
    with pytest.raises(WorkerDied):
        deploys.agent(store, "s-lost")(responses)
    assert deploys.runs == 1

    # The job, redelivered: the runner answers the round again, as it does after any crash.
    stopped = deploys.agent(store, "s-lost")(responses)

    assert deploys.runs == 1
    question = the_rerun_question(stopped.interrupts)
    result = deploys.agent(store, "s-lost")([respond(question.id, decision(answer, reason="it already went out"))])
    assert result.stop_reason == "end_turn"
    if answer == "approve":
        assert (deploys.runs, str(result)) == (2, "deployed api")
    else:
        assert deploys.runs == 1
        assert str(result).startswith("Not run again: a previous attempt of this call may have run")
        assert "U_APPROVER chose not to run it again: it already went out" in str(result)


def test_a_second_loss_asks_again_instead_of_reusing_the_first_answer(store: SessionStore) -> None:
    deploys = _Deploys()
    responses = _approve_first_request(deploys, store, "s-twice")
    deploys.crash_next = True
    with pytest.raises(WorkerDied):
        deploys.agent(store, "s-twice")(responses)
    [first] = deploys.agent(store, "s-twice")(responses).interrupts
    deploys.crash_next = True
    with pytest.raises(WorkerDied):
        deploys.agent(store, "s-twice")([respond(first.id, decision("approve"))])

    again = deploys.agent(store, "s-twice")([respond(first.id, decision("approve"))])

    assert deploys.runs == 2
    [second] = again.interrupts
    assert (second.name, second.reason["attempts"]) == (f"{RERUN_INTERRUPT}-2", 2)


def test_an_idempotent_tool_started_but_not_recorded_runs_again_without_asking(store: SessionStore) -> None:
    deploys = _Deploys(idempotent=True)
    responses = _approve_first_request(deploys, store, "s-idem")
    deploys.crash_next = True
    with pytest.raises(WorkerDied):
        deploys.agent(store, "s-idem")(responses)

    result = deploys.agent(store, "s-idem")(responses)

    assert (result.stop_reason, str(result), deploys.runs) == ("end_turn", "deployed api", 2)
