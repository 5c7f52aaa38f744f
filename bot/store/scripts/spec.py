"""How the bot's scripts are specified (``script``): each a ``state.lua.LuaScript`` on a ``.lua`` file of this package.

A script's body names its KEYS and ARGV (the spec lists them in order), the ``Status`` values (``STATUS_DENIED``) and
the few other constants below; the functions other owners supply are in ``owners/<owner>.lua``.
"""

from functools import partial
from typing import Final

from bot.domain.status import Status
from state.lua import LuaScript

TOO_LATE: Final = "too_late"
"""The decide script ran after its caller stopped waiting (a server paused, then resumed): it wrote nothing."""

LANE_KEPT_MS: Final = 60_000
"""A lane's key outlives its lease by this much (deleted or replaced long before)."""

CONSTANTS: Final[tuple[tuple[str, str | int], ...]] = (
    *((f"STATUS_{status.name}", status.value) for status in Status),
    ("TOO_LATE", TOO_LATE),
    ("LANE_KEPT_MS", LANE_KEPT_MS),
)
"""What a script of the bot may name besides its KEYS and ARGV (the prelude defines the ones it uses)."""


script: Final = partial(LuaScript, "bot.store.scripts", constants=CONSTANTS)
"""The script ``<name>.lua`` of this package, its KEYS and ARGV named in order (``state.lua.LuaScript``)."""
