"""Agents for the Strands scenarios: real ``strands.Agent`` instances and their Signoff twins.

A Strands agent here is built exactly as a team would write one: a model, ``@strands.tool``
functions, ``hooks=[SignoffGate(...)]`` and a session manager on Signoff's Redis. The model is
``StrandsScriptedModel``, a subclass of Strands' ``Model`` that streams the turns a Signoff
``ScriptedModel`` decides from the conversation, so both runtimes answer alike and a Strands
agent rebuilt in another worker continues the same script.

Tool runs are counted in Redis (``completions``), so a test sees them across agents and workers. The
Strands ``restart_service`` waits while ``HOLD_RESTART_KEY`` exists, so a test can kill its worker there.
"""

import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
import redis
import strands
from strands.models import Model as StrandsModel
from strands.tools.executors import SequentialToolExecutor
from strands.vended_interventions.hitl import HumanInTheLoop

from agent import Agent, ApprovalGate, ScriptedModel, tool
from agent.demo import RISKY_TOOLS, default_inventory, operations_model, operations_tools
from agent.models.base import Model, ModelTurn
from agent.models.scripted import text_turn, tool_turn
from agent.strands_bridge import SignoffGate, signoff_session_manager
from state.shapes import Message
from state.store import SessionStore
from tests.bot.support.agents import completions, count_completion

Factory = Callable[..., Any]


def on_both_runtimes(signoff: Factory, strands: Factory) -> pytest.MarkDecorator:
    """Run the test once with the agent ``signoff`` builds (Signoff's own) and once with ``strands``'s."""
    return pytest.mark.parametrize("factory", [signoff, strands], ids=["signoff", "strands"])


__all__ = ["completions"]

SYSTEM_PROMPT = "You are an operations assistant. Risky actions need a human's approval."
HOLD_RESTART_KEY = "test:hold:restart_service"
STARTED_RESTART_KEY = "test:started:restart_service"


class StrandsScriptedModel(StrandsModel):  # type: ignore[misc]
    """A Strands model streaming the turns of one of our models (no network).

    Attributes:
        calls: How many times Strands asked the model for a turn.
    """

    def __init__(self, model: Model) -> None:
        self.model = model
        self.calls = 0

    def update_config(self, **model_config: Any) -> None:
        """Nothing to configure."""

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError
        yield

    async def stream(
        self, messages: list[Message], tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        self.calls += 1
        turn = self.model.converse(messages, tool_specs or [], system_prompt)
        yield {"messageStart": {"role": "assistant"}}
        for block in turn.message["content"]:
            if "text" in block:
                yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
            else:
                use = block["toolUse"]
                start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
                yield {"contentBlockStart": {"start": start}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": turn.stop_reason}}


def once_then(turn: ModelTurn, answer: str = "ok") -> ScriptedModel:
    """A model asking for ``turn`` on the conversation's first request, and answering ``answer`` after that."""
    return ScriptedModel(lambda messages: turn if len(messages) == 1 else text_turn(answer))


def native_agent(
    model: Model,
    tools: list[Any],
    *,
    hooks: Sequence[Any] = (),
    session: tuple[str, SessionStore] | None = None,
    sequential: bool = False,
    system_prompt: str | None = None,
    interventions: Sequence[Any] = (),
) -> strands.Agent:
    """A real ``strands.Agent`` on ``model``'s turns, as a team would build one.

    Args:
        model: Our model whose turns Strands streams (``StrandsScriptedModel``).
        tools: ``@strands.tool`` functions.
        hooks: Strands hook providers (``SignoffGate``...).
        session: ``(session_id, store)``: persisted with ``signoff_session_manager``.
        sequential: One tool at a time, so a death inside a tool ends the run as a killed process would.
        system_prompt: The agent's system prompt.
        interventions: Strands intervention handlers (``HumanInTheLoop``...).
    """
    options: dict[str, Any] = {}
    if session is not None:
        options["session_manager"] = signoff_session_manager(*session)
    if sequential:
        options["tool_executor"] = SequentialToolExecutor()
    return strands.Agent(
        model=StrandsScriptedModel(model),
        tools=tools,
        hooks=list(hooks),
        interventions=list(interventions),
        system_prompt=system_prompt,
        callback_handler=None,
        **options,
    )


def _client(store: SessionStore) -> redis.Redis:
    client: redis.Redis = store.client
    return client


# --- the demonstration agent, written for Strands -----------------------------------------------


def strands_operations_agent(*, session_id: str, store: SessionStore, hitl: bool = False) -> Any:
    """The demonstration operations agent as a Strands agent: same requests, tools and replies.

    Args:
        session_id: The bot's session id.
        store: The bot's session store.
        hitl: Ask with Strands' ``HumanInTheLoop`` (only ``read_logs`` runs freely), not ``SignoffGate``.
    """
    inventory = default_inventory()
    counter = _client(store)

    @strands.tool
    def read_logs(service: str, lines: int = 5) -> str:
        """Read the latest log lines of a service.

        Args:
            service: Service name.
            lines: How many lines, newest last.
        """
        count_completion(counter, "read_logs")
        return "\n".join(inventory[service].log[-lines:])

    @strands.tool
    def restart_service(service: str) -> str:
        """Restart every replica of a service.

        Args:
            service: Service name.
        """
        counter.incr(STARTED_RESTART_KEY)
        deadline = time.monotonic() + 30
        while counter.exists(HOLD_RESTART_KEY) and time.monotonic() < deadline:  # a test kills the worker here
            time.sleep(0.02)
        count_completion(counter, "restart_service")
        return f"{service}: {inventory[service].replicas} replicas restarted"

    @strands.tool
    def scale_service(service: str, replicas: int) -> str:
        """Change the number of replicas of a service.

        Args:
            service: Service name.
            replicas: The new replica count.
        """
        count_completion(counter, "scale_service")
        before, inventory[service].replicas = inventory[service].replicas, replicas
        return f"{service}: scaled from {before} to {replicas} replicas"

    @strands.tool
    def rollback_deploy(service: str) -> str:
        """Roll a service back to its previous version.

        Args:
            service: Service name.
        """
        count_completion(counter, "rollback_deploy")
        target = inventory[service]
        target.version, target.previous_version = target.previous_version, target.version
        return f"{service}: rolled back from {target.previous_version} to {target.version}"

    return native_agent(
        operations_model(sorted(inventory)),
        [read_logs, restart_service, scale_service, rollback_deploy],
        hooks=[] if hitl else [SignoffGate(RISKY_TOOLS)],
        interventions=[HumanInTheLoop(allowed_tools=["read_logs"])] if hitl else [],
        session=(session_id, store),
        system_prompt=SYSTEM_PROMPT,
    )


def strands_hitl_operations_agent(*, session_id: str, store: SessionStore) -> Any:
    """The Strands operations agent behind Strands' own ``HumanInTheLoop``: nothing of Signoff but its session."""
    return strands_operations_agent(session_id=session_id, store=store, hitl=True)


def signoff_operations_agent(*, session_id: str, store: SessionStore) -> Agent:
    """Our demonstration agent, its tools counted like the Strands twin's."""
    counter = _client(store)
    tools = []
    for plain in operations_tools(default_inventory()):
        tools.append(_counted(plain, counter))
    return Agent(
        operations_model(sorted(default_inventory())),
        tools,
        hooks=[ApprovalGate(RISKY_TOOLS)],
        session_id=session_id,
        store=store,
        system_prompt=SYSTEM_PROMPT,
    )


def _counted(agent_tool: Any, counter: redis.Redis) -> Any:
    original = agent_tool.invoke

    def invoke(tool_use: Any, context: Any) -> Any:
        result = original(tool_use, context)
        count_completion(counter, agent_tool.name)
        return result

    agent_tool.invoke = invoke
    return agent_tool


# --- two calls in one turn: a free one and a gated one ------------------------------------------

BATCH_TURN = tool_turn(("t1", "notify", {"channel": "#ops"}), ("t2", "deploy", {"service": "api"}))


def _batch_model() -> ScriptedModel:
    def respond(messages: list[Message]) -> ModelTurn:
        results = [block["toolResult"] for block in messages[-1]["content"] if "toolResult" in block]
        if not results:
            return BATCH_TURN
        texts = [content.get("text", "") for result in results for content in result["content"]]
        return text_turn(" | ".join(sorted(texts)))

    return ScriptedModel(respond)


def _batch_tools(counter: redis.Redis) -> list[Callable[..., str]]:
    """``notify`` and ``deploy``, each run counted in Redis; either runtime's decorator makes them tools."""

    def notify(channel: str) -> str:
        """Tell a channel."""
        count_completion(counter, "notify")
        return f"told {channel}"

    def deploy(service: str) -> str:
        """Deploy a service."""
        count_completion(counter, "deploy")
        return f"deployed {service}"

    return [notify, deploy]


def strands_batch_agent(*, session_id: str, store: SessionStore) -> Any:
    """``notify`` (free) and ``deploy`` (gated) in one turn, run by Strands' concurrent executor."""
    return native_agent(
        _batch_model(),
        [strands.tool(function) for function in _batch_tools(_client(store))],
        hooks=[SignoffGate({"deploy": "production-changes"})],
        session=(session_id, store),
    )


def signoff_batch_agent(*, session_id: str, store: SessionStore) -> Agent:
    """Our twin of ``strands_batch_agent`` (concurrent tools)."""
    return Agent(
        _batch_model(),
        [tool(function) for function in _batch_tools(_client(store))],
        hooks=[ApprovalGate(["deploy"])],
        session_id=session_id,
        store=store,
        concurrent_tools=True,
    )


OPERATIONS = on_both_runtimes(signoff_operations_agent, strands_operations_agent)
BATCH = on_both_runtimes(signoff_batch_agent, strands_batch_agent)
