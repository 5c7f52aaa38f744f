"""What Signoff adds to Strands' vended ``HumanInTheLoop``, for a single agent and for a Swarm's or Graph's nodes.

- ``RefusalAccounts``: HumanInTheLoop cancels a call it was not given ``"y"`` for with
  ``CONFIRMATION_FAILED: <its prompt>``, so the model would not learn who refused, why, or that nobody answered
  in time. Hooked on an agent's ``AfterToolCallEvent``, it keeps the prefix and puts Signoff's account after it.
- ``may_trust``: whether an agent's HumanInTheLoop lets a person trust a tool (``enable_trust=True``, and the tool
  not listed as ``"!tool"``); the trusted tools live in the agent's state under ``TRUSTED_TOOLS_KEY``.
- ``remember_asked``: HumanInTheLoop asks its ``classifier`` once per call and remembers the call in memory only, so
  a worker that rebuilt the agent to resume it would ask again, and a classifier that now finds the call harmless
  (an LLM's answer varies) would run a call a person refused. Hooked on ``BeforeInvocationEvent``, it tells each
  HumanInTheLoop which calls it already asked a person about.
"""

from collections.abc import Mapping
from typing import Any, Final

from strands.vended_interventions.hitl import HumanInTheLoop

from agent.guarded import guarded_calls, waiting_calls
from agent.vended import CONFIRMATION_FAILED_PREFIX, HUMAN_IN_THE_LOOP_INTERRUPT

TRUSTED_TOOLS_KEY: Final = "hitl:trusted_tools"
"""Where ``HumanInTheLoop`` keeps the tools trusted for the rest of the session, in the agent's state (1.62)."""


def may_trust(agent: Any, tool: str) -> bool:
    """Whether one of ``agent``'s ``HumanInTheLoop`` interventions lets a person trust ``tool``.

    Its ``evaluate_trust`` must accept ``"t"`` (the default does).
    """
    registry = getattr(agent, "_intervention_registry", None)
    handlers = registry.handlers if registry is not None else []
    return any(
        isinstance(handler, HumanInTheLoop) and handler._enable_trust and f"!{tool}" not in handler._allowed_tools
        for handler in handlers
    )


def remember_asked(event: Any) -> None:
    """A ``BeforeInvocationEvent`` callback: each ``HumanInTheLoop`` of the agent knows the calls it asked about.

    Its classifier then never judges again a call a person was asked about: the person's answer decides it.
    """
    agent = event.agent
    interrupt_state = agent._interrupt_state
    waiting = waiting_calls(interrupt_state)
    asked = {
        call["toolUseId"]
        for interrupt in interrupt_state.interrupts.values()
        if interrupt.name == HUMAN_IN_THE_LOOP_INTERRUPT
        for call in guarded_calls(interrupt.id, waiting)
    }
    registry = getattr(agent, "_intervention_registry", None)
    for handler in registry.handlers if registry is not None else []:
        if isinstance(handler, HumanInTheLoop):
            handler._classified_tool_use_ids.update(asked)


class RefusalAccounts:
    """Signoff's account of each call refused this round, told to the model in place of HumanInTheLoop's prompt."""

    def __init__(self) -> None:
        """Start with no account."""
        self._accounts: dict[str, str] = {}

    def keep(self, accounts: Mapping[str, str]) -> None:
        """Before a resume: ``{toolUseId: what the model is told}`` for each call refused in this round."""
        self._accounts = dict(accounts)

    def rewrite(self, event: Any) -> None:
        """An ``AfterToolCallEvent`` callback: a call HumanInTheLoop cancelled carries its account."""
        message = event.cancel_message
        if not isinstance(message, str) or not message.startswith(CONFIRMATION_FAILED_PREFIX):
            return
        account = self._accounts.pop(str(event.tool_use.get("toolUseId")), None)
        if account is not None:
            event.result = {**event.result, "content": [{"text": f"{CONFIRMATION_FAILED_PREFIX} {account}"}]}
