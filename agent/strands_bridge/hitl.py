"""What Signoff adds to Strands' vended ``HumanInTheLoop``, for a single agent and for a Swarm's or Graph's nodes.

- ``RefusalAccounts``: HumanInTheLoop cancels a call it was not given ``"y"`` for with
  ``CONFIRMATION_FAILED: <its prompt>``, so the model would not learn who refused, why, or that nobody answered
  in time. Hooked on an agent's ``AfterToolCallEvent``, it keeps the prefix and puts Signoff's account after it.
- ``may_trust``: whether an agent's HumanInTheLoop lets a person trust a tool (``enable_trust=True``, and the tool
  not listed as ``"!tool"``); the trusted tools live in the agent's state under ``TRUSTED_TOOLS_KEY``.
"""

from collections.abc import Mapping
from typing import Any, Final

from strands.vended_interventions.hitl import HumanInTheLoop

from agent.vended import CONFIRMATION_FAILED_PREFIX

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
