"""What every flow service holds: the decisions and the bot's clock (each names the records' owners it uses)."""

from dataclasses import dataclass

from bot.domain.clock import Clock, system_clock
from bot.flow.decisions import DecisionService


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    """A service of the flow layer: it decides through ``decisions``, and holds as fields the few owners it uses.

    ``clock`` is the bot's own (tests and the sandbox move it).
    """

    decisions: DecisionService
    clock: Clock = system_clock
