"""The Redis key table of ``docs/redis.md``, built by calling the code that builds the keys.

Every public function of ``bot/store/keys.py`` is called with placeholders for its arguments (``<session_id>``,
shard 0, ...) and every upper-case string constant read; what starts with ``signoff:`` is a key. The shard's real
hash tag is then written back as ``<shard tag>``. The session store's own keys come from ``state.store``. A
key's type is the one the module docstring's listing gives it, and what it holds is its builder's docstring (for
a constant, the listing's words).
"""

import inspect
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, get_args

from redis.crc import key_slot

from bot.store import keys
from state import store
from tests.docs.markdown import cell, code, described, table

Scope = Literal["session", "shard", "tagged", "global"]
_PREFIX = "signoff:"
_ALIAS = re.compile(r"``<(\w+)>`` is ``([^`]+)``")
_KEY_WORD = r"signoff:(?:[^\s<]|<[^<>]*>)+"  # a key as a docstring spells it: ``<shard tag>`` holds a space
_LISTED = re.compile(
    rf"^ {{4}}(?P<keys>{_KEY_WORD}(?:, {_KEY_WORD})*) +(?P<types>[a-z]+(?:, [a-z]+)*) {{2,}}(?P<what>.*)$"
)
_CONTINUED = re.compile(r"^ {5,}(?P<what>\S.*)$")
_SCOPES: dict[Scope, str] = {
    "session": "Per session: the session's shard tag, then its id in braces (which only delimit it)",
    "shard": "Per shard: written in the same atomic step as that shard's sessions; readers merge every shard",
    "tagged": "Under a hash tag of their own: the keys of one tag share a Redis Cluster slot",
    "global": "Global: each written alone, never in a script or transaction with another key",
}


@dataclass(frozen=True)
class Key:
    """One key as the docs show it."""

    pattern: str
    built_by: str
    what: str
    type: str = ""

    @property
    def scope(self) -> Scope:
        """Where the key lives in a cluster (see ``_SCOPES``)."""
        if "{<shard tag>}:{<session_id>}" in self.pattern:
            return "session"
        if "{<shard tag>}" in self.pattern:
            return "shard"
        return "tagged" if "{" in self.pattern else "global"


def all_keys() -> list[Key]:
    """Every key the code builds, typed as the listings say."""
    listed = _listed()
    return [_typed(key, listed) for key in [*_store_keys(listed), *_bot_keys(listed)]]


def key_tables() -> str:
    """The tables, one per scope."""
    typed = all_keys()
    sections = []
    for scope, title in _SCOPES.items():
        rows = [
            [code(key.pattern), key.type, cell(key.what), code(key.built_by)]
            for key in sorted(typed, key=lambda key: key.pattern)
            if key.scope == scope
        ]
        sections.append(f"**{title}.**\n\n" + table(["key", "type", "what it holds", "built by"], rows))
    return "\n\n".join(sections)


def _store_keys(listed: dict[str, tuple[str, str]]) -> list[Key]:
    session = _placeholders(store.keys_for("<session_id>").session)
    return [
        Key(session, "state.store.keys_for(session_id).session", listed.get(_shape(session), ("", ""))[1]),
        Key(
            _placeholders(store.interrupted_index(0)),
            "state.store.interrupted_index(shard)",
            described(store.interrupted_index.__doc__),
        ),
    ]


def _bot_keys(listed: dict[str, tuple[str, str]]) -> Iterator[Key]:
    for name, value in vars(keys).items():
        if isinstance(value, str) and value.startswith(_PREFIX) and name.isupper():
            yield Key(value, f"keys.{name}", listed.get(_shape(value), ("", ""))[1])
    for name, function in inspect.getmembers(keys, inspect.isfunction):
        if function.__module__ == keys.__name__ and not name.startswith("_"):
            yield from _built_by(name, function)


def _built_by(name: str, function: Callable[..., Any]) -> Iterator[Key]:
    """The keys ``function`` builds: one per choice of its switches (a ``bool``; an optional ``shard`` that picks a
    shard's copy of a global key), each argument a placeholder."""
    parameters = list(inspect.signature(function, eval_str=True).parameters.values())
    for choice in itertools.product(*(_choices(name, parameter) for parameter in parameters)):
        arguments: list[object] = []
        keywords: dict[str, object] = {}
        spelled = []
        for parameter, (text, value) in zip(parameters, choice, strict=True):
            if text is None:  # left at its default
                continue
            if parameter.kind is parameter.KEYWORD_ONLY:
                keywords[parameter.name] = value
                spelled.append(f"{parameter.name}={text}")
            else:
                arguments.append(value)
                spelled.append(text)
        built = function(*arguments, **keywords)
        if isinstance(built, str) and built.startswith(_PREFIX):
            yield Key(_placeholders(built), f"keys.{name}({', '.join(spelled)})", described(function.__doc__))


def _choices(function: str, parameter: inspect.Parameter) -> list[tuple[str | None, object]]:
    """How a parameter may be given: (how the call shows it, or ``None`` for its default; the value passed)."""
    kinds = set(get_args(parameter.annotation)) or {parameter.annotation}
    if parameter.default is not parameter.empty:
        return [(None, parameter.default)] + ([(parameter.name, 0)] if int in kinds else [])
    if bool in kinds:
        return [("False", False), ("True", True)]
    if str in kinds:
        return [(parameter.name, f"<{parameter.name}>")]
    if int in kinds:
        return [(parameter.name, 0)]  # a shard: its tag is written back as <shard tag>
    raise TypeError(f"keys.{function}({parameter.name}: {parameter.annotation}): no placeholder for this type")


def _placeholders(key: str) -> str:
    for shard in range(store.shard_count()):
        key = key.replace(f"{{{store.shard_tag(shard)}}}", "{<shard tag>}")
    return key


def _typed(key: Key, listed: dict[str, tuple[str, str]]) -> Key:
    return Key(key.pattern, key.built_by, key.what, listed.get(_shape(key.pattern), ("", ""))[0])


def _listed() -> dict[str, tuple[str, str]]:
    """The key listings of ``state/store.py`` and ``bot/store/keys.py``, together."""
    return {**_listing(store.__doc__), **_listing(keys.__doc__)}


def shard_tags() -> str:
    """The hash tag of each shard with the default ``REDIS_SHARDS``, and the Redis Cluster slot it hashes to."""
    assert store.shard_count() == store.DEFAULT_SHARDS, "the tags shown are the default layout's"
    rows = [
        [str(shard), code(store.shard_tag(shard)), str(key_slot(store.shard_tag(shard).encode()))]
        for shard in range(store.DEFAULT_SHARDS)
    ]
    return table(["shard", "tag", "slot"], rows)


def _listing(docstring: str | None) -> dict[str, tuple[str, str]]:
    """A module docstring's key listing: the shape of each key (see ``_shape``) -> (type, what it holds)."""
    text = docstring or ""
    aliases = dict(_ALIAS.findall(text))
    found: dict[str, tuple[str, str]] = {}
    last: list[str] = []
    for line in text.splitlines():
        if listed := _LISTED.match(line):
            names = [_expanded(name, aliases) for name in listed["keys"].split(", ")]
            kinds = listed["types"].split(", ")
            kinds = kinds if len(kinds) == len(names) else [listed["types"]] * len(names)
            last = [_shape(name) for name in names]
            found |= {shape: (kind, listed["what"]) for shape, kind in zip(last, kinds, strict=True)}
        elif (continued := _CONTINUED.match(line)) and last:
            found |= {shape: (found[shape][0], f"{found[shape][1]} {continued['what']}") for shape in last}
        else:
            last = []
    return found


def _expanded(name: str, aliases: dict[str, str]) -> str:
    for alias, meaning in aliases.items():
        name = name.replace(f"<{alias}>", meaning)
    return name


def _shape(key: str) -> str:
    """A key with its placeholders as ``*`` (a run of them, ``<team>:<cid>``, as one) and optional ``[...]`` parts
    dropped, so that a listing and a builder spell it alike."""
    return re.sub(r"\*(?::\*)+", "*", re.sub(r"\[[^\]]*\]", "", re.sub(r"<[^<>]*>", "*", key)))
