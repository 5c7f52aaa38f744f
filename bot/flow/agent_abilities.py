"""What some agents can do beyond what the runner drives (``bot.flow.agent_adapters.Runnable``).

Strands' vended ``HumanInTheLoop`` tells the model less than why a call was refused, and lets a person trust a
tool for the rest of the session; an agent that has either ability says so by having these methods (checked
with ``isinstance``), so agents without them need nothing.
"""

from collections.abc import Collection, Mapping
from typing import Protocol, runtime_checkable

from state.interrupt import Interrupt


@runtime_checkable
class ExplainsRefusals(Protocol):
    """An agent whose interrupts' own code may tell the model less than why a call was refused (Strands')."""

    def explain_refusals(self, refusals: Mapping[str, str]) -> None:
        """Before a resume: ``{toolUseId: what the model is told}`` for each call refused in this round."""


@runtime_checkable
class TrustsTools(Protocol):
    """An agent that lets a person trust a tool for the rest of its session (``bot.domain.trusts``)."""

    def offers_trust(self, interrupt: Interrupt, tool: str) -> bool:
        """Whether the answer to ``interrupt``, which guards a call to ``tool``, may also trust the tool."""

    def keep_trusted(self, tools: Collection[str]) -> None:
        """Before the agent runs: trust no tool but ``tools`` (those Signoff holds a record of: not revoked ones).

        An agent whose parts forget their state between turns (a Swarm's nodes) trusts each of ``tools`` again.
        """
