"""Lua scripts kept in ``.lua`` files, each run with a prelude that names its KEYS and ARGV (``LuaScript``).

A script's body says ``approval_key``, never ``KEYS[1]``: its spec lists the names in order, generates the prelude
(``local approval_key = KEYS[1]``, ...) and builds each call's KEYS and ARGV from the same names (``key_list``,
``arg_list``), so that the order is written once. A spec's ``optional_keys`` come last: a call may leave out a
trailing run of them, and the body tests each one's presence (its local is ``nil``, or ``#KEYS``). The constants the
body names (``STATUS_DENIED``) come from the spec's table, only those it uses. The functions other owners supply
(``owners``: the top-level ``local function`` blocks of ``owners/<owner>.lua`` next to the script) are included when
the script uses them, so that a script never spells another owner's record. ``luacheck`` lints the scripts as Redis
runs them (``tests.lua_lint``).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Final, TypeVar, cast

KEYS_MORE: Final = "KEYS_MORE"
"""The prelude's name for the index of the first KEYS past the named ones (when the spec takes ``more_keys``)."""
ARGV_MORE: Final = "ARGV_MORE"
"""The prelude's name for the index of the first ARGV past the named ones (when the spec takes ``more_args``)."""

_FUNCTION: Final = re.compile(r"((?:^--[^\n]*\n)*)^local function (\w+)\(.*?^end\n", re.MULTILINE | re.DOTALL)
_WORD: Final = re.compile(r"\b[A-Za-z_]\w*\b")
_T = TypeVar("_T")
_Arg = TypeVar("_Arg", bound=str | int | float | bytes)


def owner_functions(package: str, owner: str) -> dict[str, str]:
    """The Lua functions ``owner`` supplies to ``package``'s scripts, by name (each with its comment), file order."""
    text = (resources.files(package) / "owners" / f"{owner}.lua").read_text()
    return {match.group(2): match.group(0) for match in _FUNCTION.finditer(text)}


def _literal(value: str | int) -> str:
    """``value`` as a Lua literal."""
    if isinstance(value, int):
        return str(value)
    if "\n" in value or "\r" in value:
        raise ValueError(f"value=<{value!r}> | a Lua constant is one line")
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class LuaScript:
    """One script: its file, the names of its KEYS and ARGV in order, the constants and owners' functions it may use.

    Attributes:
        package: The package holding ``<name>.lua`` (and ``owners/``).
        name: The file's name without ``.lua``.
        keys: The names of its KEYS, in order (Lua names: the prelude makes each a local).
        optional_keys: The names of the KEYS after those, in order, that a call may leave out from any one on (the
            prelude's local of one left out is ``nil``); refused with ``more_keys``, whose index would move.
        args: The names of its ARGV, in order.
        more_keys: It takes KEYS past the named ones (from index ``KEYS_MORE`` on).
        more_args: It takes ARGV past the named ones (from index ``ARGV_MORE`` on).
        constants: Constants it may name (``STATUS_DENIED``: ``'denied'``); the prelude defines the ones it uses.
        owners: The owners whose functions it may call, in the order they are defined.
    """

    package: str
    name: str
    keys: tuple[str, ...] = ()
    optional_keys: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    more_keys: bool = False
    more_args: bool = False
    constants: tuple[tuple[str, str | int], ...] = ()
    owners: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Refuse optional KEYS with more KEYS: where the extra ones start would depend on the call."""
        if self.optional_keys and self.more_keys:
            raise ValueError(f"script=<{self.name}> | optional_keys and more_keys: KEYS_MORE would move")

    @cached_property
    def body(self) -> str:
        """The file's text."""
        return (resources.files(self.package) / f"{self.name}.lua").read_text()

    @cached_property
    def functions(self) -> str:
        """The owners' functions the body uses (and those they use), in the owners' order."""
        offered = {name: text for owner in self.owners for name, text in owner_functions(self.package, owner).items()}
        used: set[str] = set()
        words = set(_WORD.findall(self.body))
        while grown := (words & offered.keys()) - used:
            used |= grown
            words = {word for name in grown for word in _WORD.findall(offered[name])}
        return "".join(text for name, text in offered.items() if name in used)

    @cached_property
    def prelude(self) -> str:
        """The locals naming the KEYS, the ARGV and what else the body uses (where the extra ones start, constants)."""
        lines = [f"local {name} = KEYS[{index}]" for index, name in enumerate((*self.keys, *self.optional_keys), 1)]
        lines += [f"local {name} = ARGV[{index}]" for index, name in enumerate(self.args, 1)]
        table: list[tuple[str, str | int]] = [*self.constants]
        if self.more_keys:
            table.append((KEYS_MORE, len(self.keys) + 1))
        if self.more_args:
            table.append((ARGV_MORE, len(self.args) + 1))
        used = set(_WORD.findall(self.body))
        lines += [f"local {name} = {_literal(value)}" for name, value in table if name in used]
        return "\n".join(lines) + "\n"

    @cached_property
    def text(self) -> str:
        """The script as Redis runs it: the owners' functions (they see none of its names), the prelude, the body."""
        return f"-- {self.package}/{self.name}.lua\n" + self.functions + self.prelude + self.body

    def key_list(self, *more: str, **named: str | None) -> list[str]:
        """The call's KEYS: each named one (by its name in ``keys``), then ``more``.

        An optional key may be left out, or given as ``None``: then so must every optional key after it.
        """
        given = [name for name in self.optional_keys if named.get(name) is not None]
        if given != list(self.optional_keys[: len(given)]):
            raise TypeError(f"script=<{self.name}>, given=<{given}> | optional keys are left out from one on, in order")
        present: Mapping[str, str | None] = named
        if None in named.values():
            present = {name: value for name, value in named.items() if value is not None}
        names, expected = (
            ((*self.keys, *given), frozenset(given).union(self.keys)) if given else (self.keys, self._key_names)
        )
        listed = _in_order("keys", names, present, more, takes_more=self.more_keys, script=self.name, expected=expected)
        return cast(list[str], listed)  # every None left out above

    def arg_list(self, *more: _Arg, **named: _Arg) -> list[_Arg]:
        """The call's ARGV: each named one (by its name in ``args``), then ``more``."""
        return _in_order(
            "args", self.args, named, more, takes_more=self.more_args, script=self.name, expected=self._arg_names
        )

    # The names as sets, made once: a call (a click's, among others) only compares its own names with them.
    @cached_property
    def _key_names(self) -> frozenset[str]:
        return frozenset(self.keys)

    @cached_property
    def _arg_names(self) -> frozenset[str]:
        return frozenset(self.args)


def _in_order(
    what: str,
    names: tuple[str, ...],
    named: Mapping[str, _T],
    more: tuple[_T, ...],
    *,
    takes_more: bool,
    script: str,
    expected: frozenset[str],
) -> list[_T]:
    """``named`` in the order of ``names`` (``expected``: the same names as a set, made once), then ``more``.

    Refuses ``more`` unless ``takes_more``.
    """
    if named.keys() != expected:
        missing, unknown = sorted(set(names) - named.keys()), sorted(named.keys() - set(names))
        raise TypeError(f"script=<{script}>, missing=<{missing}>, unknown=<{unknown}> | {what} not as the spec names")
    if more and not takes_more:
        raise TypeError(f"script=<{script}> | takes no {what} past its named ones")
    listed = [named[name] for name in names]
    listed += more
    return listed
