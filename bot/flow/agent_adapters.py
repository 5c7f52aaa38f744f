"""Turns what ``AGENT_FACTORY`` returns into an agent the runner can drive.

The runner needs: ``interrupted``, ``pending_interrupts``, ``pending_tool_uses``, ``state``
(``get``/``set``), ``messages``, and a call that takes a prompt or ``interruptResponse`` blocks
and returns an ``agent.AgentResult``. Our ``agent.Agent`` has all of it; a real ``strands.Agent``
is wrapped in ``agent.strands_bridge.StrandsRunnable``, a Strands ``Swarm`` or ``Graph`` in
``agent.strands_bridge.MultiAgentRunnable`` (the ``strands`` extra). ``strands`` is imported only
when the factory returned one of its objects.
"""

from typing import Any, Protocol

from agent import Agent, AgentResult
from agent.agent import Prompt
from state.interrupt import Interrupt
from state.shapes import Message, ToolUse


class RunnableState(Protocol):
    """The agent state calls the runner makes."""

    def get(self, key: str) -> Any:
        """The value under ``key`` (``None`` if absent)."""

    def set(self, key: str, value: Any) -> None:
        """Store a JSON-serializable value."""


class Runnable(Protocol):
    """What the runner drives: our ``Agent`` or an adapter around another runtime's agent."""

    @property
    def interrupted(self) -> bool:
        """Whether the agent waits for interrupt responses."""

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """The interrupts still waiting for an answer."""

    @property
    def pending_tool_uses(self) -> list[ToolUse]:
        """The calls of the interrupted batch without a result yet (what its interrupts guard)."""

    @property
    def state(self) -> RunnableState:
        """The agent's own JSON state, persisted with its session."""

    @property
    def messages(self) -> list[Message]:
        """The conversation."""

    def __call__(self, prompt: Prompt = None) -> AgentResult:
        """Work on a prompt, resume with ``interruptResponse`` blocks, or continue (no argument)."""


def _is_strands_candidate(candidate: Any) -> bool:
    """Whether ``candidate`` comes from Strands or from our bridge (decided without importing strands)."""
    return any(
        cls.__module__.split(".", 1)[0] == "strands" or cls.__module__.startswith("agent.strands_bridge")
        for cls in type(candidate).__mro__
    )


def as_runnable(candidate: Any) -> Runnable:
    """The agent itself, or an adapter around it.

    Raises:
        TypeError: The factory returned something the bot cannot run.
        ImportError: A Strands agent, but the bridge cannot be imported (install ``signoff[strands]``).
    """
    if isinstance(candidate, Agent):
        return candidate
    if _is_strands_candidate(candidate):
        # Imported here so that the bot runs without the ``strands`` extra installed.
        from agent.strands_bridge import (  # noqa: PLC0415
            MultiAgentRunnable,
            StrandsRunnable,
            is_multi_agent,
            is_strands_agent,
        )

        runnable: Runnable
        if isinstance(candidate, StrandsRunnable | MultiAgentRunnable):
            runnable = candidate
        elif is_strands_agent(candidate):
            runnable = StrandsRunnable(candidate)
        elif is_multi_agent(candidate):
            runnable = MultiAgentRunnable(candidate)
        else:
            raise TypeError(
                f"agent_type=<{type(candidate).__qualname__}> | a Strands object, "
                "but not a strands.Agent, Swarm or Graph"
            )
        return runnable
    raise TypeError(
        f"agent_type=<{type(candidate).__qualname__}> | AGENT_FACTORY must return an agent.Agent, "
        "a strands.Agent, or a Strands Swarm or Graph"
    )
