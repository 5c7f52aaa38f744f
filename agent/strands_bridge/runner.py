"""Drive a real ``strands.Agent`` with the interface the bot's runner uses for Signoff's own agent.

``StrandsRunnable`` offers ``interrupted``, ``state`` (``get``/``set``, persisted by the Strands
session manager with the next message or at the end of the invocation), ``messages`` and a call
taking a prompt, ``interruptResponse`` blocks or nothing (continue: run the tool calls of a
trailing toolUse message, else ask the model), returning ``agent.AgentResult``.
"""

from collections.abc import Collection, Mapping
from typing import Any, Protocol

import redis
from strands import Agent as StrandsAgent
from strands.hooks import AfterToolCallEvent, BeforeInvocationEvent
from strands.session import RepositorySessionManager

from agent.agent import AgentResult, Prompt
from agent.guarded import waiting_calls, waiting_interrupts
from agent.strands_bridge.gate import SignoffGate
from agent.strands_bridge.hitl import TRUSTED_TOOLS_KEY, RefusalAccounts, may_trust, remember_asked
from agent.strands_bridge.repository import DEFAULT_AGENT_ID, RedisSessionRepository
from agent.vended import HANDOFF_TOOL, HUMAN_IN_THE_LOOP_INTERRUPT
from state.interrupt import Interrupt
from state.shapes import Message, ToolUse
from state.store import SessionStore


class AgentStateLike(Protocol):
    """The part of an agent's state the bot uses (Strands' ``AgentState`` and ours both fit)."""

    def get(self, key: str) -> Any:
        """The value under ``key`` (``None`` if absent)."""

    def set(self, key: str, value: Any) -> None:
        """Store a JSON-serializable value."""


def is_strands_agent(candidate: object) -> bool:
    """Whether ``candidate`` is a ``strands.Agent`` (or a subclass)."""
    return isinstance(candidate, StrandsAgent)


class StrandsRunnable:
    """A ``strands.Agent`` behind the bot's runner interface.

    An agent without a ``SignoffGate`` gets one that gates nothing, for its at-most-once rules (see
    ``agent.attempts``): a call a person approved through ``HumanInTheLoop``, a hook or the tool itself
    never runs again silently after its worker died.

    Args:
        agent: The Strands agent; give it a session manager (``signoff_session_manager``) so a
            worker in another process can resume it.
    """

    def __init__(self, agent: Any) -> None:
        """Wrap ``agent``; raise ``TypeError`` if it is not a ``strands.Agent``."""
        if not is_strands_agent(agent):
            raise TypeError(f"agent_type=<{type(agent).__qualname__}> | not a strands.Agent")
        self.agent = agent
        self._refusals = RefusalAccounts()
        agent.hooks.add_callback(AfterToolCallEvent, self._refusals.rewrite)
        agent.hooks.add_callback(BeforeInvocationEvent, remember_asked)
        if not _has_gate(agent):
            # Calls a person approved some other way (HumanInTheLoop, a hook, the tool itself) run at most once too.
            SignoffGate((), idempotent=[HANDOFF_TOOL]).register_hooks(agent.hooks)  # it only returns the answer

    @property
    def interrupted(self) -> bool:
        """Whether the agent waits for interrupt responses."""
        return bool(self.agent._interrupt_state.activated)

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """The interrupts still waiting for an answer (empty unless interrupted)."""
        return waiting_interrupts(self.agent._interrupt_state)

    @property
    def pending_tool_uses(self) -> list[ToolUse]:
        """The calls of the interrupted batch without a result yet (what its interrupts guard)."""
        return waiting_calls(self.agent._interrupt_state)

    @property
    def state(self) -> AgentStateLike:
        """The agent's own JSON state (Strands' ``AgentState``)."""
        state: AgentStateLike = self.agent.state
        return state

    @property
    def messages(self) -> list[Message]:
        """The conversation (Strands may add ``metadata``/``tracking_id`` keys to messages)."""
        messages: list[Message] = self.agent.messages
        return messages

    def explain_refusals(self, refusals: Mapping[str, str]) -> None:
        """Tell the model why each call ``HumanInTheLoop`` is about to refuse was refused (by its toolUseId)."""
        self._refusals.keep(refusals)

    def offers_trust(self, interrupt: Interrupt, tool: str) -> bool:
        """Whether ``interrupt`` is ``HumanInTheLoop``'s and it lets a person trust ``tool`` (``enable_trust=True``)."""
        return interrupt.name == HUMAN_IN_THE_LOOP_INTERRUPT and may_trust(self.agent, tool)

    def keep_trusted(self, tools: Collection[str]) -> None:
        """Make ``HumanInTheLoop``'s trusted tools ``tools`` (those it may trust), and no other.

        Gone: a trust revoked in Slack, or one made on another requester's request (theirs again when they ask).
        """
        trusted = self.agent.state.get(TRUSTED_TOOLS_KEY)
        held = trusted if isinstance(trusted, list) else []
        kept = [tool for tool in held if tool in tools]
        kept += sorted(tool for tool in tools if tool not in held and may_trust(self.agent, tool))
        if kept != held:
            self.agent.state.set(TRUSTED_TOOLS_KEY, kept)

    def __call__(self, prompt: Prompt = None) -> AgentResult:
        """Invoke the Strands agent and report its result as ``agent.AgentResult``.

        Raises:
            TypeError: Interrupted, and ``prompt`` is not a list of interruptResponse blocks.
            KeyError: A response names an interrupt this agent did not raise.
            ValueError: Responses were sent to an agent that is not interrupted.
        """
        strands_prompt = prompt if prompt is None or isinstance(prompt, str) else list(prompt)
        return to_agent_result(self.agent(strands_prompt))


def _has_gate(agent: Any) -> bool:
    """Whether a ``SignoffGate`` is among the agent's hooks (it keeps the agent's calls at most once)."""
    entries = agent.hooks._registered_callbacks.values()
    return any(isinstance(getattr(entry.callback, "__self__", None), SignoffGate) for each in entries for entry in each)


def to_agent_result(result: Any) -> AgentResult:
    """Map a Strands ``AgentResult``: same stop reason and message; interrupts as ``state.interrupt.Interrupt``."""
    interrupts = [
        Interrupt(id=interrupt.id, name=interrupt.name, reason=interrupt.reason, response=interrupt.response)
        for interrupt in (result.interrupts or [])
    ]
    message: Message | None = result.message
    return AgentResult(str(result.stop_reason), message, interrupts)


def signoff_session_manager(
    session_id: str,
    store: SessionStore,
    *,
    client: redis.Redis | None = None,
    agent_id: str = DEFAULT_AGENT_ID,
) -> Any:
    """A Strands ``RepositorySessionManager`` on Signoff's Redis, mirrored into ``store`` for the bot.

    Args:
        session_id: The bot's session id (what ``AGENT_FACTORY`` receives).
        store: The bot's session store (what ``AGENT_FACTORY`` receives); the Strands records go
            to the same Redis unless ``client`` says otherwise.
        client: The Redis client for the Strands records (default: the store's).
        agent_id: The agent to mirror into ``store`` (give the Strands agent the same ``agent_id``).
    """
    redis_client = client if client is not None else store.client
    repository = RedisSessionRepository(redis_client, mirror=store, mirror_agent_id=agent_id)
    return RepositorySessionManager(session_id=session_id, session_repository=repository)
