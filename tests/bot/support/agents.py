"""Agents for the scenario tests (importable by a worker subprocess through ``AGENT_FACTORY``).

``counting_agent``: a deploy (gated) followed by a notify (free, idempotent) in one batch; every
completed tool call is counted in Redis, and either tool can be held on a Redis key so a test
can kill the worker while it runs. ``two_gates_agent``: two gated restarts in one turn. ``held_agent``:
the demonstration agent, built only once a Redis key is gone (a worker can be killed while a
job waits there, before anything of it ran).
"""

import time
from typing import Any

import redis

from agent import Agent, ApprovalGate, ScriptedModel, tool
from agent.demo import build_operations_agent
from agent.models.base import ModelTurn
from agent.models.scripted import text_turn, tool_turn
from state.shapes import Message
from state.store import SessionStore

HOLD_KEY = "test:hold:notify"
STARTED_KEY = "test:started:notify"
HOLD_BUILD_KEY = "test:hold:build"
BUILDS_KEY = "test:builds"
HOLD_DEPLOY_KEY = "test:hold:deploy"
STARTED_DEPLOY_KEY = "test:started:deploy"


def completions(client: redis.Redis, tool_name: str) -> int:
    """How many times ``tool_name`` ran to completion (any runtime, any worker)."""
    value = client.get(f"test:completed:{tool_name}")
    return int(value) if value is not None else 0


def count_completion(client: redis.Redis, tool_name: str) -> None:
    """Count one completed run of ``tool_name`` (what ``completions`` reads)."""
    client.incr(f"test:completed:{tool_name}")


def _answer_after_results(first_turn: ModelTurn, final_text: str) -> ScriptedModel:
    def respond(messages: list[Message]) -> ModelTurn:
        has_results = any("toolResult" in block for block in messages[-1]["content"])
        return text_turn(final_text) if has_results else first_turn

    return ScriptedModel(respond)


def counting_agent(*, session_id: str, store: SessionStore, client: Any = None) -> Agent:
    """Deploy (gated) then notify (free); counts completions in Redis."""
    counter: redis.Redis = client or store.client  # the bot's own client: a cluster client on a cluster

    def hold(started_key: str, hold_key: str) -> None:
        counter.incr(started_key)
        deadline = time.monotonic() + 30
        while counter.exists(hold_key) and time.monotonic() < deadline:
            time.sleep(0.02)

    @tool
    def deploy(service: str) -> str:
        """Deploy a service."""
        hold(STARTED_DEPLOY_KEY, HOLD_DEPLOY_KEY)
        count_completion(counter, "deploy")
        return f"deployed {service}"

    @tool(idempotent=True)  # telling a channel twice is harmless: a lost attempt simply runs again
    def notify(channel: str) -> str:
        """Tell a channel."""
        hold(STARTED_KEY, HOLD_KEY)
        count_completion(counter, "notify")
        return f"told {channel}"

    model = _answer_after_results(
        tool_turn(("t1", "deploy", {"service": "api"}), ("t2", "notify", {"channel": "#ops"})), "deployed and told"
    )
    return Agent(model, [deploy, notify], hooks=[ApprovalGate(["deploy"])], session_id=session_id, store=store)


def two_gates_agent(*, session_id: str, store: SessionStore, concurrent: bool = True) -> Agent:
    """Two gated restarts in one turn (run concurrently unless told otherwise)."""
    from agent.demo import default_inventory, operations_tools

    model = _answer_after_results(
        tool_turn(("t1", "restart_service", {"service": "api"}), ("t2", "restart_service", {"service": "search"})),
        "both restarted",
    )
    return Agent(
        model,
        operations_tools(default_inventory()),
        hooks=[ApprovalGate(["restart_service"])],
        session_id=session_id,
        store=store,
        concurrent_tools=concurrent,
    )


def held_agent(*, session_id: str, store: SessionStore) -> Agent:
    """The demonstration agent; each build is counted and waits while ``HOLD_BUILD_KEY`` exists."""
    counter = store.client
    counter.incr(BUILDS_KEY)
    deadline = time.monotonic() + 30
    while counter.exists(HOLD_BUILD_KEY) and time.monotonic() < deadline:
        time.sleep(0.02)
    return build_operations_agent(session_id=session_id, store=store)


def one_gated_call(tool_name: str, payload: Any, *, answer: str = "done") -> Any:
    """A factory whose agent asks to run one gated tool ``tool_name`` with ``{"payload": payload}``, then answers."""

    def factory(*, session_id: str, store: SessionStore) -> Agent:
        @tool(name=tool_name)
        def act(payload: Any = None) -> str:
            """Act on the payload."""
            return "acted"

        model = _answer_after_results(tool_turn(("t1", tool_name, {"payload": payload})), answer)
        return Agent(model, [act], hooks=[ApprovalGate([tool_name])], session_id=session_id, store=store)

    return factory


def gated_calls(calls: list[tuple[str, str, dict[str, Any]]]) -> Any:
    """A factory whose agent asks to run every ``(toolUseId, tool, input)`` of ``calls`` at once, each gated."""

    def factory(*, session_id: str, store: SessionStore) -> Agent:
        def make(name: str) -> Any:
            @tool(name=name)
            def act(n: int = 0) -> str:
                """Act."""
                return "acted"

            return act

        names = sorted({name for _, name, _ in calls})
        model = _answer_after_results(tool_turn(*calls), "done")
        hooks = [ApprovalGate(names)]
        tools = [make(name) for name in names]
        return Agent(model, tools, hooks=hooks, session_id=session_id, store=store, concurrent_tools=True)

    return factory


def answering_agent(answer: str) -> Any:
    """A factory whose agent answers ``answer`` at once, whatever it is asked."""

    def factory(*, session_id: str, store: SessionStore) -> Agent:
        return Agent(ScriptedModel(lambda _messages: text_turn(answer)), [], session_id=session_id, store=store)

    return factory


def nested(depth: int) -> Any:
    """A JSON value nested ``depth`` lists deep."""
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value
