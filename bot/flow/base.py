"""What a flow service holds: the records' owners, the decisions, and the bot's clock."""

from dataclasses import dataclass

from bot.domain.clock import Clock, system_clock
from bot.flow.decisions import DecisionService
from bot.store.stores import Stores


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    """A service of the flow layer: it reads and writes through ``stores`` and decides through ``decisions``.

    ``clock`` is the bot's own (tests and the sandbox move it).
    """

    stores: Stores
    decisions: DecisionService
    clock: Clock = system_clock
