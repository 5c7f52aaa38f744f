"""Invariant 4 (Once) for Strands agents behind ``SignoffGate``: an approved call runs at most once.

A worker dead between "started" and "recorded": the redelivered run asks a human (the ``rerun``
interrupt) unless the tool is declared idempotent. Redis stopped right after the tool returned:
the gate saves the result once Redis is back, and the tool ran once.
"""

import contextlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest
import redis
import strands
from redis.backoff import NoBackoff
from redis.retry import Retry
from strands.hooks import AfterToolCallEvent

from agent.approval import Decision
from agent.attempts import STARTED_CALLS
from agent.models.scripted import tool_turn
from agent.strands_bridge import SignoffGate, StrandsRunnable
from bot.render import action_ids as ids
from state import RedisServer, SessionStore
from tests.agent.support import WorkerDied, the_rerun_question
from tests.bot.support.doomed_worker import approve_and_kill_the_worker_in_the_tool
from tests.bot.support.harness import is_decided, running_bot, take_over
from tests.bot.support.people import APPROVER
from tests.outage import StopRedisAfterTool, TimedOutage
from tests.strands.agents import (
    HOLD_RESTART_KEY,
    STARTED_RESTART_KEY,
    completions,
    native_agent,
    once_then,
    strands_hitl_operations_agent,
    strands_operations_agent,
)

AGENTS = "tests.strands.agents"

SID = "T0TEST:C0OPS:1700000000.000400"


def _respond(interrupt_id: str, kind: str, reason: str | None = None) -> list[dict[str, Any]]:
    record = Decision(decision=kind, decided_by="U0APPROVER", reason=reason, decided_at=datetime.now(UTC))
    return [{"interruptResponse": {"interruptId": interrupt_id, "response": record.model_dump(mode="json")}}]


class _Deploys:
    """A Strands agent with one gated ``deploy``; its real executions are counted in memory."""

    def __init__(self, store: SessionStore, *, idempotent: bool = False) -> None:
        self.store = store
        self.runs = 0
        self.die_next = False
        self.idempotent = idempotent

    def runnable(self, *extra_hooks: Any) -> StrandsRunnable:
        @strands.tool
        def deploy(service: str) -> str:
            """Deploy a service."""
            self.runs += 1
            if self.die_next:
                self.die_next = False
                raise WorkerDied  # it took effect; the worker died before the result was recorded
            return f"deployed {service}"

        gate = SignoffGate(["deploy"], idempotent=["deploy"] if self.idempotent else ())
        agent = native_agent(
            once_then(tool_turn(("t1", "deploy", {"service": "api"}))),
            [deploy],
            hooks=[gate, *extra_hooks],  # After* callbacks run in reverse: extra hooks run before the gate saves
            session=(SID, self.store),
            sequential=True,
        )
        return StrandsRunnable(agent)

    def approved(self) -> list[dict[str, Any]]:
        [gate] = self.runnable()("deploy api").interrupts
        return _respond(gate.id, "approve")


@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_a_call_started_but_not_recorded_asks_a_human_instead_of_running_again(
    store: SessionStore, answer: str
) -> None:
    deploys = _Deploys(store)
    responses = deploys.approved()
    deploys.die_next = True
    with contextlib.suppress(WorkerDied):
        deploys.runnable()(responses)
    assert deploys.runs == 1

    stopped = deploys.runnable()(responses)  # the job, redelivered

    assert deploys.runs == 1
    question = the_rerun_question(stopped.interrupts)
    result = deploys.runnable()(_respond(question.id, answer, reason="already out"))
    assert (result.stop_reason, str(result)) == ("end_turn", "ok")
    assert deploys.runs == (2 if answer == "approve" else 1)
    stored = store.load(SID)
    assert stored is not None
    [deploy_result] = [block["toolResult"] for block in stored.messages[-2]["content"] if "toolResult" in block]
    if answer == "approve":
        assert deploy_result["status"] == "success"
    else:
        assert "Not run again" in deploy_result["content"][0]["text"]
    assert STARTED_CALLS not in stored.agent_state


def test_an_idempotent_tool_started_but_not_recorded_runs_again(store: SessionStore) -> None:
    deploys = _Deploys(store, idempotent=True)
    responses = deploys.approved()
    deploys.die_next = True
    with contextlib.suppress(WorkerDied):
        deploys.runnable()(responses)

    result = deploys.runnable()(responses)

    assert (result.stop_reason, deploys.runs) == ("end_turn", 2)


def test_a_result_lost_to_a_redis_blip_is_saved_once_redis_is_back_and_the_tool_ran_once(
    outage: TimedOutage,
) -> None:
    # The client's own retries are off, so the outage reaches the gate's save whatever its length.
    store = SessionStore(redis.Redis.from_url(outage.server.url, retry=Retry(NoBackoff(), 0)))
    deploys = _Deploys(store)
    responses = deploys.approved()

    result = deploys.runnable(StopRedisAfterTool(outage, AfterToolCallEvent))(responses)

    assert outage.restarted.is_set()
    assert (result.stop_reason, str(result), deploys.runs) == ("end_turn", "ok", 1)
    assert deploys.runnable().interrupted is False


@pytest.mark.parametrize("factory", [strands_operations_agent, strands_hitl_operations_agent], ids=["gate", "hitl"])
def test_through_the_bot_a_worker_killed_inside_a_strands_tool_becomes_a_new_approval_round(
    redis_client: redis.Redis, redis_server: RedisServer, factory: Any
) -> None:
    # With Strands' own HumanInTheLoop and no SignoffGate too: before, the redelivered job restarted checkout again.
    with running_bot(redis_client, agent_factory=factory) as bot:
        thread_ts = approve_and_kill_the_worker_in_the_tool(
            bot,
            redis_client,
            redis_server.url,
            "restart checkout",
            hold_key=HOLD_RESTART_KEY,
            started_key=STARTED_RESTART_KEY,
            agent_factory=f"{AGENTS}:{factory.__name__}",
        )

        take_over(bot.services.worker(claim_idle_ms=0))  # the job, redelivered
        bot.drain()

        assert redis_client.get(STARTED_RESTART_KEY) == b"1"  # not run again
        assert len(bot.approval_messages()) == 2
        question = bot.approval_messages()[1]
        assert not is_decided(question)
        assert "may already have run" in json.dumps(question["blocks"])
        assert "restart_service" in question["text"]
        bot.click(ids.APPROVE_ACTION, bot.approval_id(1), user=APPROVER)
        bot.drain()
        assert redis_client.get(STARTED_RESTART_KEY) == b"2"
        assert completions(redis_client, "restart_service") == 1
        assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"
