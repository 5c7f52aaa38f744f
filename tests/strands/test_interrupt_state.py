"""What a Strands agent persisted reads back through ``state``, and the bot sees the same interrupts."""

import contextlib
import json
from datetime import UTC, datetime
from typing import Any

import redis
import strands

from agent import Agent
from agent.approval import Decision
from agent.strands_bridge import SignoffGate, StrandsRunnable, strands_key
from agent.strands_bridge.gate import UNREADABLE_RESPONSE
from bot.render import action_ids as ids
from state import SessionStore
from state.interrupt import _InterruptState
from tests.agent.support import WorkerDied
from tests.bot.support.harness import running_bot, thread_session
from tests.bot.support.people import APPROVER
from tests.redis_targets import on_both
from tests.strands.agents import BATCH_TURN, completions, native_agent, once_then, strands_batch_agent

# The Strands repository and its mirror into our session record, on one server and on a cluster.
pytest_generate_tests = on_both

SID = "T0TEST:C0OPS:1700000000.000200"


def _respond(interrupt_id: str, response: Any) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": interrupt_id, "response": response}}]


def _decision(kind: str, reason: str | None = None) -> dict[str, Any]:
    decided_by = None if kind == "expired" else APPROVER
    record = Decision(decision=kind, decided_by=decided_by, reason=reason, decided_at=datetime.now(UTC))
    return record.model_dump(mode="json")


def test_the_persisted_interrupt_state_reads_back_through_state(redis_client: redis.Redis) -> None:
    store = SessionStore(redis_client)
    strands_agent = strands_batch_agent(session_id=SID, store=store)
    result = StrandsRunnable(strands_agent)("ship it")
    assert result.stop_reason == "interrupt"

    stored = store.load(SID)
    assert stored is not None
    assert stored.interrupted
    assert store.interrupted_sessions() == [SID]
    assert stored.interrupt_state == strands_agent._interrupt_state.to_dict()
    restored = _InterruptState.from_dict(stored.interrupt_state)
    assert restored.to_dict() == stored.interrupt_state
    assert [(i.id, i.name, i.reason) for i in restored.interrupts.values()] == [
        (i.id, i.name, i.reason) for i in result.interrupts
    ]
    [interrupt] = result.interrupts
    assert interrupt.name == "approval"
    assert interrupt.reason["inputSchema"]["required"] == ["service"]  # the tool's schema, for an edit form
    assert {key: value for key, value in interrupt.reason.items() if key != "inputSchema"} == {
        "tool": "deploy",
        "input": {"service": "api"},
        "toolUseId": "t2",
        "response": "record",
        "policy": "production-changes",
    }
    assert interrupt.id.startswith("v1:before_tool_call:t2:")
    # The Strands record holds the same state (the mirror is written from it).
    record = redis_client.hget(strands_key(SID, "agent", "default"), "record")
    assert record is not None
    assert json.loads(record)["_internal_state"]["interrupt_state"] == stored.interrupt_state


def test_our_runtime_continues_a_session_a_strands_agent_stopped(redis_client: redis.Redis) -> None:
    """The mirror is a genuine session: our own agent loads it and sees the same interrupt."""
    from agent import ApprovalGate, ScriptedModel

    store = SessionStore(redis_client)
    [interrupt] = strands_batch_agent(session_id=SID, store=store)("ship it").interrupts
    ours = Agent(ScriptedModel([BATCH_TURN]), [], hooks=[ApprovalGate(["deploy"])], session_id=SID, store=store)
    assert ours.interrupted
    assert list(ours._interrupt_state.interrupts) == [interrupt.id]


def test_the_bot_records_the_interrupts_the_strands_result_reported(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=strands_batch_agent) as bot:
        assert bot.mention("ship it").status == 200
        bot.drain()
        thread_ts = bot.approval_messages()[0]["thread_ts"]
        session_id = thread_session(thread_ts)
        stored = bot.services.stores.sessions.load(session_id)
        assert stored is not None
        [raised] = _InterruptState.from_dict(stored.interrupt_state).interrupts.values()

        _, [approval] = bot.services.stores.approvals.round_approvals(session_id)
        assert approval.request.interrupt_id == raised.id
        assert approval.request.interrupt_name == "approval"
        assert (approval.request.tool, approval.request.tool_input) == ("deploy", {"service": "api"})
        assert approval.request.reason == raised.reason

        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert bot.thread_texts(thread_ts)[-1] == "deployed api | told #ops"


def _gated_agent(redis_client: redis.Redis, session_id: str) -> Any:
    return strands_batch_agent(session_id=session_id, store=SessionStore(redis_client))


def test_an_expired_request_is_not_reported_as_a_human_denial(redis_client: redis.Redis) -> None:
    runnable = StrandsRunnable(_gated_agent(redis_client, SID))
    [interrupt] = runnable("ship it").interrupts
    result = runnable(_respond(interrupt.id, _decision("expired")))
    assert "expired without a decision" in str(result)
    assert "denied" not in str(result)
    assert completions(redis_client, "deploy") == 0


def test_an_unreadable_response_fails_closed(redis_client: redis.Redis) -> None:
    runnable = StrandsRunnable(_gated_agent(redis_client, SID))
    [interrupt] = runnable("ship it").interrupts
    result = runnable(_respond(interrupt.id, {"decision": "yes please"}))
    assert UNREADABLE_RESPONSE in str(result)
    assert completions(redis_client, "deploy") == 0


def test_the_gate_takes_a_policy_callable_and_lets_other_tools_run() -> None:
    gate = SignoffGate(lambda tool: "prod" if tool.startswith("deploy") else None)
    assert gate.reason_for({"toolUseId": "t", "name": "deploy_api", "input": {}}) == {
        "tool": "deploy_api",
        "input": {},
        "toolUseId": "t",
        "response": "record",
        "policy": "prod",
    }
    assert gate.reason_for({"toolUseId": "t", "name": "notify", "input": {}}) is None
    named = SignoffGate(["deploy"])
    assert named.reason_for({"toolUseId": "t", "name": "deploy", "input": {}}) == {
        "tool": "deploy",
        "input": {},
        "toolUseId": "t",
        "response": "record",
    }


def test_an_agent_without_a_session_manager_still_runs_behind_the_adapter() -> None:
    @strands.tool
    def deploy(service: str) -> str:
        """Deploy a service."""
        return f"deployed {service}"

    from agent import ScriptedModel
    from agent.models.scripted import text_turn

    plain = native_agent(ScriptedModel([BATCH_TURN, text_turn("done")]), [deploy], hooks=[SignoffGate(["deploy"])])
    runnable = StrandsRunnable(plain)
    first = runnable("ship it")
    assert first.stop_reason == "interrupt"
    assert runnable.interrupted
    final = runnable(_respond(first.interrupts[0].id, _decision("approve")))
    assert (final.stop_reason, str(final)) == ("end_turn", "done")


def test_a_worker_dying_mid_resume_never_reruns_a_finished_call(redis_client: redis.Redis) -> None:
    from strands.hooks import AfterToolCallEvent

    from agent.models.scripted import tool_turn

    store = SessionStore(redis_client)
    turn = tool_turn(("t1", "deploy", {"service": "api"}), ("t2", "deploy", {"service": "web"}))

    class DieAfterFirstCall:
        def register_hooks(self, registry: Any, **kwargs: Any) -> None:
            registry.add_callback(AfterToolCallEvent, self.die)

        def die(self, event: Any) -> None:
            raise WorkerDied

    def build(*extra_hooks: Any) -> Any:
        @strands.tool
        def deploy(service: str) -> str:
            """Deploy a service."""
            redis_client.incr(f"test:completed:deploy:{service}")
            return f"deployed {service}"

        return native_agent(
            once_then(turn),
            [deploy],
            hooks=[*extra_hooks, SignoffGate(["deploy"])],  # After* callbacks run in reverse: the gate saves first
            session=(SID, store),
            sequential=True,
        )

    interrupts = StrandsRunnable(build())("deploy api and web").interrupts
    responses = [block for interrupt in interrupts for block in _respond(interrupt.id, _decision("approve"))]
    dying = StrandsRunnable(build(DieAfterFirstCall()))
    with contextlib.suppress(WorkerDied):
        dying(responses)
    assert redis_client.get("test:completed:deploy:api") == b"1"
    assert redis_client.get("test:completed:deploy:web") is None

    # The job, redelivered to another worker: the finished call is not run again, and the
    # sequential executor then reaches the second call, which asks for its own approval.
    redelivered = StrandsRunnable(build())
    second = redelivered(responses)
    assert redis_client.get("test:completed:deploy:api") == b"1"
    assert [interrupt.reason["toolUseId"] for interrupt in second.interrupts] == ["t2"]

    result = StrandsRunnable(build())(_respond(second.interrupts[0].id, _decision("approve")))
    assert (result.stop_reason, str(result)) == ("end_turn", "ok")
    assert redis_client.get("test:completed:deploy:api") == b"1"
    assert redis_client.get("test:completed:deploy:web") == b"1"


def test_a_worker_dying_in_a_first_pass_never_reruns_a_finished_call(redis_client: redis.Redis) -> None:

    from agent.models.scripted import tool_turn

    store = SessionStore(redis_client)
    turn = tool_turn(("t1", "step", {"name": "a"}), ("t2", "step", {"name": "b"}))
    dying = {"armed": True}

    def build() -> Any:
        @strands.tool
        def step(name: str) -> str:
            """One step of a rollout (no approval needed)."""
            if name == "b" and dying["armed"]:
                raise WorkerDied
            redis_client.incr(f"test:completed:step:{name}")
            return f"{name} done"

        return native_agent(
            once_then(turn),
            [step],
            hooks=[SignoffGate(["deploy"], idempotent=["step"])],  # the call that died simply runs again
            session=("T0TEST:C0OPS:1700000000.000300", store),
            sequential=True,
        )

    with contextlib.suppress(WorkerDied):
        StrandsRunnable(build())("roll out")
    assert redis_client.get("test:completed:step:a") == b"1"

    dying["armed"] = False
    result = StrandsRunnable(build())()  # the job, redelivered: carry on

    assert (result.stop_reason, str(result)) == ("end_turn", "ok")
    assert redis_client.get("test:completed:step:a") == b"1"  # replayed from the record, not re-run
    assert redis_client.get("test:completed:step:b") == b"1"
