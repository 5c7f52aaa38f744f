"""Strands agents raising interrupts the ways the Strands docs show, with no ``SignoffGate``.

Each factory builds a real ``strands.Agent`` persisted with ``signoff_session_manager``:

- ``hook_agent``: a ``BeforeToolCallEvent`` hook calling ``event.interrupt(name, reason=...)`` and
  reading the answer as the docs do (``approval.lower() != "y"``; until ``FIXED_KEY`` is set, a
  dict response makes it raise, as the docs' hook does);
- ``tool_agent``: a ``@tool(context=True)`` tool calling ``tool_context.interrupt(...)``, which
  expects a boolean (asked for with the ``"response"`` key of its reason);
- ``batch_agent``: a ``BeforeToolsEvent`` hook approving a whole batch, reading the decision record.

The model is scripted: ``delete <paths>`` asks for ``delete_files``, ``inspect <paths>`` for
``inspect_files``, ``clean <paths>`` for both in one turn, ``purge <paths>`` for one
``delete_files`` per turn (the same toolUseIds every time, as a scripted model or a provider
reusing ids would); once done it repeats the tool results. Signoff's own runtime gets twins
of the same hooks and tool (``own_*``), plus ``own_gated_run_agent``, an invocation gate that
guards no tool call. Tool runs are counted in Redis.
"""

from collections.abc import Callable
from functools import partial
from typing import Any

import strands
from strands.hooks import BeforeToolCallEvent, BeforeToolsEvent

from agent import Agent, ScriptedModel, ToolContext, tool
from agent import hooks as own_hooks
from agent.models.base import ModelTurn
from agent.models.scripted import text_turn, tool_turn
from state.shapes import Message
from state.store import SessionStore
from tests.bot.support.agents import completions, count_completion
from tests.strands.agents import native_agent

__all__ = ["completions"]

DENIED = "User denied permission to delete files"


def _prompt_text(message: Message) -> str:
    return " ".join(block["text"] for block in message["content"] if "text" in block)


def respond(messages: list[Message]) -> ModelTurn:
    """The scripted turns every agent of these tests plays (see the module's docstring)."""
    start = max(i for i, message in enumerate(messages) if message["role"] == "user" and _prompt_text(message))
    verb, _, rest = _prompt_text(messages[start]).partition(" ")
    paths = rest.split()
    results = [
        block["toolResult"]
        for message in messages[start + 1 :]
        for block in message["content"]
        if "toolResult" in block
    ]
    if verb == "purge" and len(results) < len(paths):
        # One path per turn, the same toolUseId every time: each turn is a new round with reused ids.
        return tool_turn(("t1", "delete_files", {"paths": [paths[len(results)]]}))
    if results:
        return text_turn(" | ".join(content.get("text", "") for result in results for content in result["content"]))
    if verb == "delete":
        return tool_turn(("t1", "delete_files", {"paths": paths}))
    if verb == "inspect":
        return tool_turn(("t1", "inspect_files", {"paths": paths}))
    if verb == "clean":
        return tool_turn(("t1", "delete_files", {"paths": paths}), ("t2", "inspect_files", {"paths": paths}))
    return text_turn("Say delete, inspect, clean or purge, with paths.")


def _count(store: SessionStore, tool_name: str) -> None:
    count_completion(store.client, tool_name)


def _file_tools(store: SessionStore) -> list[Callable[..., str]]:
    """``delete_files`` and ``inspect_files``, each run counted; either runtime's decorator makes them tools."""

    def delete_files(paths: list[str]) -> str:
        """Delete files.

        Args:
            paths: The files.
        """
        _count(store, "delete_files")
        return f"deleted {' '.join(paths)}"

    def inspect_files(paths: list[str]) -> str:
        """Describe files.

        Args:
            paths: The files.
        """
        _count(store, "inspect_files")
        return f"inspected {' '.join(paths)}"

    return [delete_files, inspect_files]


def strands_file_tools(store: SessionStore) -> list[Any]:
    """``delete_files`` and ``inspect_files`` as ``@strands.tool`` functions, each run counted."""
    return [strands.tool(function) for function in _file_tools(store)]


def _strands_agent(session_id: str, store: SessionStore, tools: list[Any], hooks: list[Any]) -> strands.Agent:
    return native_agent(ScriptedModel(respond), tools, hooks=hooks, session=(session_id, store))


# --- a BeforeToolCallEvent hook, as in the Strands docs ---------------------------------------


FIXED_KEY = "test:hook-fixed"
"""Set in Redis to 'deploy' a fixed hook: it then reads Signoff's decision record too."""


class DocsApprovalHook(strands.hooks.HookProvider):  # type: ignore[misc]
    """The docs' hook: asks before the gated tools and expects ``"y"``."""

    def __init__(self, store: SessionStore, *, dict_reason: bool, gated: tuple[str, ...]) -> None:
        self.store = store
        self.dict_reason = dict_reason
        self.gated = gated

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: Any) -> None:
        if event.tool_use["name"] not in self.gated:
            return
        paths = event.tool_use["input"]["paths"]
        # A reason dict may hold anything, a non-string "tool" included.
        reason: Any = {"paths": paths, "tool": {"kind": "files"}} if self.dict_reason else f"{', '.join(paths)}?"
        approval = event.interrupt(f"{event.tool_use['name']}-approval", reason=reason)
        if self.store.client.exists(FIXED_KEY) and isinstance(approval, dict):
            approval = "y" if approval["decision"] == "approve" else "n"
        if approval.lower() != "y":
            event.cancel_tool = DENIED


def hook_agent(
    *, session_id: str, store: SessionStore, dict_reason: bool = False, gated: tuple[str, ...] = ("delete_files",)
) -> strands.Agent:
    """The gated tools wait for the docs' ``BeforeToolCallEvent`` hook (which expects ``"y"``/``"n"``)."""
    hook = DocsApprovalHook(store, dict_reason=dict_reason, gated=gated)
    return _strands_agent(session_id, store, strands_file_tools(store), [hook])


hook_agent_dict_reason = partial(hook_agent, dict_reason=True)
hook_agent_two_gates = partial(hook_agent, gated=("delete_files", "inspect_files"))


# --- a tool that interrupts through its context -----------------------------------------------


def tool_agent(*, session_id: str, store: SessionStore) -> strands.Agent:
    """``delete_files`` asks itself, through ``tool_context.interrupt``, for a boolean."""

    @strands.tool(context=True)
    def delete_files(paths: list[str], tool_context: Any) -> str:
        """Delete files.

        Args:
            paths: The files.
        """
        approved = tool_context.interrupt("delete-approval", reason={"paths": paths, "response": "boolean"})
        if approved is not True:
            return DENIED
        _count(store, "delete_files")
        return f"deleted {' '.join(paths)}"

    inspect_files = strands_file_tools(store)[1]
    return _strands_agent(session_id, store, [delete_files, inspect_files], [])


# --- a BeforeToolsEvent hook approving the whole batch ----------------------------------------


class BatchApprovalHook(strands.hooks.HookProvider):  # type: ignore[misc]
    """Asks once per batch; reads Signoff's decision record."""

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolsEvent, self.approve)

    def approve(self, event: Any) -> None:
        calls = [block["toolUse"]["name"] for block in event.message["content"] if "toolUse" in block]
        response = event.interrupt("batch-approval", reason=f"Run {', '.join(calls)}?")
        if response["decision"] != "approve":
            event.cancel = DENIED


def batch_agent(*, session_id: str, store: SessionStore) -> strands.Agent:
    """Every batch waits for one approval (the interrupt id is the same for every batch)."""
    return _strands_agent(session_id, store, strands_file_tools(store), [BatchApprovalHook()])


# --- the same hooks on Signoff's own runtime --------------------------------------------------


def _own_tools(store: SessionStore) -> list[Any]:
    return [tool(function) for function in _file_tools(store)]


class _OwnDocsHook:
    def __init__(self, store: SessionStore, gated: tuple[str, ...]) -> None:
        self.store = store
        self.gated = gated

    def register_hooks(self, registry: own_hooks.HookRegistry) -> None:
        registry.add_callback(own_hooks.BeforeToolCallEvent, self.approve)

    def approve(self, event: own_hooks.BeforeToolCallEvent) -> None:
        if event.tool_use["name"] not in self.gated:
            return
        approval = event.interrupt(f"{event.tool_use['name']}-approval", reason="Go ahead?")
        if self.store.client.exists(FIXED_KEY) and isinstance(approval, dict):
            approval = "y" if approval["decision"] == "approve" else "n"
        if approval.lower() != "y":
            event.cancel_tool = DENIED


class _OwnInvocationGate:
    """Asks before any work (an invocation gate: it guards no tool call)."""

    def register_hooks(self, registry: own_hooks.HookRegistry) -> None:
        registry.add_callback(own_hooks.BeforeInvocationEvent, self.approve)

    def approve(self, event: own_hooks.BeforeInvocationEvent) -> None:
        response = event.interrupt("run-approval", reason={"tool": "inspect_files", "why": "a whole run"})
        if response["decision"] != "approve":
            raise PermissionError("run refused")


class _OwnBatchHook:
    def register_hooks(self, registry: own_hooks.HookRegistry) -> None:
        registry.add_callback(own_hooks.BeforeToolsEvent, self.approve)

    def approve(self, event: own_hooks.BeforeToolsEvent) -> None:
        response = event.interrupt("batch-approval", reason="Run this batch?")
        if response["decision"] != "approve":
            event.cancel = DENIED


def own_hook_agent(*, session_id: str, store: SessionStore, gated: tuple[str, ...] = ("delete_files",)) -> Agent:
    """Our twin of ``hook_agent`` (concurrent tools, so two gates stop in one turn)."""
    return Agent(
        ScriptedModel(respond),
        _own_tools(store),
        hooks=[_OwnDocsHook(store, gated)],
        session_id=session_id,
        store=store,
        concurrent_tools=True,
    )


own_hook_agent_two_gates = partial(own_hook_agent, gated=("delete_files", "inspect_files"))


def own_batch_agent(*, session_id: str, store: SessionStore) -> Agent:
    """Our twin of ``batch_agent``."""
    return Agent(ScriptedModel(respond), _own_tools(store), hooks=[_OwnBatchHook()], session_id=session_id, store=store)


def own_tool_agent(*, session_id: str, store: SessionStore) -> Agent:
    """Our twin of ``tool_agent``: the tool asks through its context, for a boolean."""

    @tool
    def delete_files(paths: list[str], tool_context: ToolContext) -> str:
        """Delete files."""
        approved = tool_context.interrupt("delete-approval", reason={"paths": paths, "response": "boolean"})
        if approved is not True:
            return DENIED
        _count(store, "delete_files")
        return f"deleted {' '.join(paths)}"

    tools = [delete_files, _own_tools(store)[1]]
    return Agent(ScriptedModel(respond), tools, session_id=session_id, store=store)


def own_gated_run_agent(*, session_id: str, store: SessionStore) -> Agent:
    """Every run waits for an invocation gate whose reason names a tool it does not guard."""
    return Agent(
        ScriptedModel(respond), _own_tools(store), hooks=[_OwnInvocationGate()], session_id=session_id, store=store
    )
