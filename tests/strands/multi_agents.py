"""Strands Swarms and Graphs for the multi-agent scenarios, written as the Strands docs write them.

Each factory builds a real ``Swarm`` or ``Graph`` of real ``strands.Agent`` nodes; nothing of Signoff in
them but ``session_manager=signoff_session_manager(session_id, store)``. The nodes' models are scripted
(``StrandsScriptedModel``) from the request found in their input (``delete <paths>``):

- ``triage`` hands off to ``cleaner`` (Swarm); ``inspector`` inspects the paths, then ``cleaner`` runs (Graph);
- ``cleaner`` asks for ``delete_files`` on the paths, then answers with the tool's result.

How ``delete_files`` waits for a human:

- ``*_tool_agent``: the tool asks itself (``tool_context.interrupt``) for a boolean;
- ``swarm_hook_agent``: the docs' ``BeforeToolCallEvent`` hook on the node, which expects ``"y"``;
- ``*_node_gate_agent``: the docs' ``BeforeNodeCallEvent`` hook on the orchestrator asks before ``cleaner``
  runs at all (which expects ``"y"``); the tool itself does not ask;
- ``*_hitl_agent``: ``cleaner`` has Strands' vended ``HumanInTheLoop(allowed_tools=["inspect_files"],
  enable_trust=True)``: no policy rule, no response key.

Tool runs are counted in Redis (``completions``), and so are the orchestrators built (``builds``): the factory is
called once per job, so a resume is always done by a freshly built orchestrator, as another worker would.
"""

import re
from collections.abc import Callable
from typing import Any

import redis
import strands
from strands import ToolContext, tool
from strands.hooks import BeforeNodeCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strands.multiagent import GraphBuilder, Swarm
from strands.vended_interventions.hitl import HumanInTheLoop

from agent import ScriptedModel
from agent.models.base import ModelTurn
from agent.models.scripted import text_turn, tool_turn
from agent.strands_bridge import signoff_session_manager
from state.shapes import Message
from state.store import SessionStore
from tests.bot.support.agents import completions, count_completion
from tests.strands.agents import StrandsScriptedModel

__all__ = ["completions"]

DENIED = "User denied permission to delete files"
NODE_DENIED = "User denied permission to clean up"
NOT_DELETED = "not deleted: no approval"
NOT_PERSISTED = "session_manager=signoff_session_manager(session_id, store)"
"""What the bot says to add to an orchestrator it cannot resume."""
_BUILDS = "test:built:multi-agent"
_REQUEST = re.compile(r"(?:User Request: |Original Task: |^)delete ([^\n]+)", re.MULTILINE)


def builds(client: redis.Redis) -> int:
    """How many orchestrators the factories built (one per job that ran one)."""
    value = client.get(_BUILDS)
    return int(value) if value is not None else 0


# --- the nodes' scripted turns ------------------------------------------------------------------


def _paths(messages: list[Message]) -> list[str]:
    first = " ".join(block["text"] for block in messages[0]["content"] if "text" in block)
    match = _REQUEST.search(first)
    return match[1].split() if match else []


def _results(messages: list[Message]) -> list[str]:
    return [
        content.get("text", "")
        for message in messages
        for block in message["content"]
        if "toolResult" in block
        for content in block["toolResult"]["content"]
    ]


def _cleaner(messages: list[Message]) -> ModelTurn:
    if results := _results(messages):
        return text_turn(" | ".join(results))
    return tool_turn(("t1", "delete_files", {"paths": _paths(messages)}))


def _triage(messages: list[Message]) -> ModelTurn:
    if _results(messages):
        return text_turn("cleaner takes it from here")
    return tool_turn(("h1", "handoff_to_agent", {"agent_name": "cleaner", "message": "Delete what was asked."}))


def _inspector(messages: list[Message]) -> ModelTurn:
    if results := _results(messages):
        return text_turn(" | ".join(results))
    return tool_turn(("i1", "inspect_files", {"paths": _paths(messages)}))


def _model(turns: Callable[[list[Message]], ModelTurn]) -> StrandsScriptedModel:
    return StrandsScriptedModel(ScriptedModel(turns))


# --- the tools and the hooks, as the Strands docs write them --------------------------------------


def _tools(client: redis.Redis, *, ask: bool) -> tuple[Any, Any]:
    """``delete_files`` (asking for a boolean itself when ``ask``) and ``inspect_files``, each run counted."""

    @tool(context=True)
    def delete_files(paths: list[str], tool_context: ToolContext) -> str:
        """Delete files.

        Args:
            paths: The files.
        """
        reason = {"paths": paths, "response": "boolean"}
        if ask and tool_context.interrupt("delete-approval", reason=reason) is not True:
            return NOT_DELETED
        count_completion(client, "delete_files")
        return f"deleted {' '.join(paths)}"

    @tool
    def inspect_files(paths: list[str]) -> str:
        """Describe files.

        Args:
            paths: The files.
        """
        count_completion(client, "inspect_files")
        return f"inspected {' '.join(paths)}"

    return delete_files, inspect_files


class ApprovalHook(HookProvider):  # type: ignore[misc]
    """The docs' tool hook: asks before ``delete_files`` and expects ``"y"``."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return
        approval = event.interrupt("files-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if approval.lower() != "y":
            event.cancel_tool = DENIED


class CleanupApprovalHook(HookProvider):  # type: ignore[misc]
    """The docs' node hook: asks before the ``cleaner`` node runs and expects ``"y"``."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id != "cleaner":
            return
        approval = event.interrupt("cleanup-approval", reason={"resources": "the paths asked for"})
        if approval.lower() != "y":
            event.cancel_node = NODE_DENIED


# --- the orchestrators ----------------------------------------------------------------------------


def _trusting_hitl() -> HumanInTheLoop:
    return HumanInTheLoop(allowed_tools=["inspect_files"], enable_trust=True)


def _swarm(
    session_id: str,
    store: SessionStore,
    *,
    ask: bool,
    node_hooks: list[Any],
    hooks: list[Any],
    interventions: list[Any] | None = None,
) -> Swarm:
    store.client.incr(_BUILDS)
    delete_files, inspect_files = _tools(store.client, ask=ask)
    triage = strands.Agent(
        name="triage", model=_model(_triage), system_prompt="You route cleanup requests.", callback_handler=None
    )
    cleaner = strands.Agent(
        name="cleaner",
        model=_model(_cleaner),
        system_prompt="You delete files.",
        tools=[delete_files, inspect_files],
        hooks=node_hooks,
        interventions=interventions,
        callback_handler=None,
    )
    return Swarm(nodes=[triage, cleaner], hooks=hooks, session_manager=signoff_session_manager(session_id, store))


def _graph(
    session_id: str, store: SessionStore, *, ask: bool, hooks: list[Any], interventions: list[Any] | None = None
) -> Any:
    store.client.incr(_BUILDS)
    delete_files, inspect_files = _tools(store.client, ask=ask)
    inspector = strands.Agent(name="inspector", model=_model(_inspector), tools=[inspect_files], callback_handler=None)
    cleaner = strands.Agent(
        name="cleaner", model=_model(_cleaner), tools=[delete_files], interventions=interventions, callback_handler=None
    )
    builder = GraphBuilder()
    builder.add_node(inspector, "inspector")
    builder.add_node(cleaner, "cleaner")
    builder.add_edge("inspector", "cleaner")
    builder.set_entry_point("inspector")
    builder.set_execution_timeout(300)
    builder.set_hook_providers(hooks)
    builder.set_session_manager(signoff_session_manager(session_id, store))
    return builder.build()


def swarm_tool_agent(*, session_id: str, store: SessionStore) -> Swarm:
    """``triage`` hands off to ``cleaner``, whose ``delete_files`` asks for a boolean itself."""
    return _swarm(session_id, store, ask=True, node_hooks=[], hooks=[])


def swarm_hook_agent(*, session_id: str, store: SessionStore) -> Swarm:
    """The same Swarm; ``cleaner``'s ``delete_files`` waits for the docs' ``BeforeToolCallEvent`` hook."""
    return _swarm(session_id, store, ask=False, node_hooks=[ApprovalHook()], hooks=[])


def swarm_node_gate_agent(*, session_id: str, store: SessionStore) -> Swarm:
    """The same Swarm; the docs' ``BeforeNodeCallEvent`` hook asks before ``cleaner`` runs."""
    return _swarm(session_id, store, ask=False, node_hooks=[], hooks=[CleanupApprovalHook()])


def graph_tool_agent(*, session_id: str, store: SessionStore) -> Any:
    """``inspector`` then ``cleaner``, whose ``delete_files`` asks for a boolean itself."""
    return _graph(session_id, store, ask=True, hooks=[])


def graph_node_gate_agent(*, session_id: str, store: SessionStore) -> Any:
    """The same Graph; the docs' ``BeforeNodeCallEvent`` hook asks before ``cleaner`` runs."""
    return _graph(session_id, store, ask=False, hooks=[CleanupApprovalHook()])


def swarm_hitl_agent(*, session_id: str, store: SessionStore) -> Swarm:
    """The same Swarm; ``cleaner``'s ``HumanInTheLoop`` (trust enabled) asks before ``delete_files``."""
    return _swarm(session_id, store, ask=False, node_hooks=[], hooks=[], interventions=[_trusting_hitl()])


def graph_hitl_agent(*, session_id: str, store: SessionStore) -> Any:
    """The same Graph; ``cleaner``'s ``HumanInTheLoop`` (trust enabled) asks before ``delete_files``."""
    return _graph(session_id, store, ask=False, hooks=[], interventions=[_trusting_hitl()])


def unpersisted_swarm_agent(*, session_id: str, store: SessionStore) -> Swarm:
    """A Swarm without a session manager: no other worker could resume it."""
    delete_files, _ = _tools(store.client, ask=True)
    return Swarm(nodes=[strands.Agent(name="cleaner", model=_model(_cleaner), tools=[delete_files])])
