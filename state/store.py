"""Agent sessions in Redis, written with compare-and-set on a version.

Sessions are spread over a fixed number of *shards* (``REDIS_SHARDS``, see ``use_shards``): a
session's shard is a stable hash of its id. Every key of a session, and every structure kept per
shard (here the interrupted index; the bot adds its queues and indexes), carries its shard's hash
tag, so one script or transaction over a session and its shard's structures touches one Redis
Cluster slot. Each shard's tag is chosen so that its slot falls in the shard's share of an even
split of the slots: on a cluster of ``REDIS_SHARDS`` masters, every master holds one shard.

Key layout (every key comes from ``keys_for`` and ``interrupted_index``; Redis hashes only the first
``{...}``, the shard tag: the braces around the session id only delimit it)::

    signoff:{<shard tag>}:{<session_id>}:session   hash   version, messages, agent_state, interrupt_state,
                                                          format, updated_at_ms  (JSON values, format "1")
    signoff:{<shard tag>}:interrupted              zset   ids of the shard's sessions whose interrupt state
                                                          is activated, scored by when they entered it (ms)

A write is one Lua script (one round trip: ``save_session.lua``, ``delete_session.lua``, next to this module): it
compares the stored version with the writer's, writes the hash, sets or clears the TTL (never while interrupted),
and keeps the interrupted index exact. Readers of the index merge every shard.
"""

import heapq
import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import redis
from redis.commands.core import Script
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from state.errors import ConflictError, SessionException, UnstorableValueError
from state.lua import LuaScript
from state.shapes import Message
from state.text import as_text
from state.validation import ShapeError, check_agent_state, check_interrupt_state, check_messages

FORMAT: Final = "1"
DEFAULT_SHARDS: Final = 3
"""Sized for a 3-master cluster; on one server the same layout costs a few more keys, nothing else."""
MAX_SHARDS: Final = 1024
_MAX_SESSION_ID_LENGTH: Final = 512
_FORBIDDEN_IN_SESSION_ID: Final = re.compile(r"[\s{}]")

_KEYS: Final = ("session_key", "interrupted_key")  # every script's: the session hash, its shard's interrupted index
_SAVE: Final = LuaScript(
    "state",
    "save_session",
    keys=_KEYS,
    args=(
        "expected_version",
        "format",
        "session_id",
        "now_ms",
        "ttl_ms",  # 0: no expiry
        "interrupted",  # '1' or '0'
        "messages",
        "agent_state",
        "interrupt_state",
    ),
    owners=("session",),
)
_DELETE: Final = LuaScript(
    "state", "delete_session", keys=_KEYS, args=("expected_version", "format", "session_id"), owners=("session",)
)
_PRUNE: Final = LuaScript("state", "prune_interrupted", keys=_KEYS, args=("session_id",))
SCRIPTS: Final = (_SAVE, _DELETE, _PRUNE)
"""The session store's scripts (``.lua`` files of this package)."""


@dataclass
class _Layout:
    shards: int = DEFAULT_SHARDS


_LAYOUT = _Layout()  # one per process, like the Redis it describes: set once at start (``use_shards``)


def use_shards(count: int) -> None:
    """Set how many shards sessions are spread over (``REDIS_SHARDS``); every process must use the same.

    Data written with another count is not found (``python -m bot migrate`` moves it).

    Raises:
        ValueError: ``count`` is not 1 to ``MAX_SHARDS``.
    """
    if not 1 <= count <= MAX_SHARDS:
        raise ValueError(f"shards=<{count}> | must be 1 to {MAX_SHARDS}")
    _LAYOUT.shards = count


def shard_count() -> int:
    """How many shards sessions are spread over."""
    return _LAYOUT.shards


def shard_of(session_id: str) -> int:
    """The shard of ``session_id``: the share of the slot range its own hash slot falls in (stable)."""
    return key_slot(session_id.encode()) * _LAYOUT.shards // REDIS_CLUSTER_HASH_SLOTS


def shard_tag(shard: int) -> str:
    """The hash tag of ``shard`` (without braces)."""
    return _tags(_LAYOUT.shards)[shard]


@cache
def _tags(count: int) -> tuple[str, ...]:
    """For each shard ``i``, the first ``s<i>.<n>`` whose slot lies in the ``i``-th of ``count`` equal slot ranges."""
    tags = []
    for shard in range(count):
        low, high = (REDIS_CLUSTER_HASH_SLOTS * index // count for index in (shard, shard + 1))
        attempt = 0
        while not low <= key_slot(f"s{shard}.{attempt}".encode()) < high:
            attempt += 1
        tags.append(f"s{shard}.{attempt}")
    return tuple(tags)


def interrupted_index(shard: int) -> str:
    """The index of a shard's sessions stopped on interrupts."""
    return f"signoff:{{{shard_tag(shard)}}}:interrupted"


@dataclass(frozen=True)
class SessionKeys:
    """The Redis keys of one session."""

    session: str
    interrupted_index: str


def _named(keys: SessionKeys) -> dict[str, str]:
    """``keys`` by the names every script of the store gives them (``_KEYS``)."""
    return {"session_key": keys.session, "interrupted_key": keys.interrupted_index}


def keys_for(session_id: str) -> SessionKeys:
    """Return the keys of ``session_id``; the only place key names are built.

    Raises:
        ValueError: The id is empty, too long, or contains braces, whitespace or control
            characters (braces would break the hash tag).
    """
    if not session_id or len(session_id) > _MAX_SESSION_ID_LENGTH:
        raise ValueError(f"session_id=<{session_id!r}> | must be 1 to {_MAX_SESSION_ID_LENGTH} characters")
    if _FORBIDDEN_IN_SESSION_ID.search(session_id) or not session_id.isprintable():
        raise ValueError(f"session_id=<{session_id!r}> | must not contain braces, spaces or control characters")
    shard = shard_of(session_id)
    return SessionKeys(
        session=f"signoff:{{{shard_tag(shard)}}}:{{{session_id}}}:session", interrupted_index=interrupted_index(shard)
    )


@dataclass(frozen=True)
class Session:
    """One agent session as stored.

    Attributes:
        session_id: Its id.
        version: Bumped by every successful write; pass it back as ``expected_version``.
        messages: The conversation.
        agent_state: The agent's own JSON state.
        interrupt_state: ``_InterruptState.to_dict()`` output.
        updated_at_ms: When it was last written (the store's clock, in ms).
    """

    session_id: str
    version: int
    messages: list[Message]
    agent_state: dict[str, Any]
    interrupt_state: dict[str, Any]
    updated_at_ms: int

    @property
    def interrupted(self) -> bool:
        """Whether the agent is stopped on interrupts."""
        return bool(self.interrupt_state.get("activated"))


def _to_json(value: Any, field: str, session_id: str) -> str:
    r"""``value`` as JSON text for Redis.

    A lone surrogate (valid in a ``str`` and in JSON as ``\ud800``, not in UTF-8) is written as
    that escape, which reads back to the same string: a model may well produce one.

    Raises:
        UnstorableValueError: ``value`` holds something JSON has no form for (an object, NaN).
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        try:
            text.encode()
        except UnicodeEncodeError:
            text = json.dumps(value, separators=(",", ":"), allow_nan=False)
        return text
    except (TypeError, ValueError, RecursionError) as error:
        raise UnstorableValueError(
            f"session_id=<{session_id}>, field=<{field}> | not JSON-serializable: {error}"
        ) from error


class SessionStore:
    """Reads and writes sessions; safe to share between threads (redis-py pools connections).

    Args:
        client: A redis-py client. Responses may be bytes or str.
        ttl_seconds: Default expiry of a session after its last write (``None``: never). A session
            stopped on interrupts never expires: its humans may take their time.
        clock: Returns the current time in seconds; injectable so tests can move time.
    """

    def __init__(
        self,
        client: redis.Redis,
        *,
        ttl_seconds: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Register the scripts; nothing is sent until the first call."""
        self._client = client
        self._ttl_seconds = ttl_seconds
        self._clock = clock
        self._save = client.register_script(_SAVE.text)
        self._delete = client.register_script(_DELETE.text)

    @property
    def client(self) -> redis.Redis:
        """The Redis client this store writes with."""
        return self._client

    def load(self, session_id: str) -> Session | None:
        """Return the stored session, or ``None`` if there is none.

        Raises:
            SessionException: The stored data is corrupted or is not a session (nothing is deleted).
        """
        keys = keys_for(session_id)
        try:
            raw = self._client.hgetall(keys.session)
        except redis.ResponseError as error:
            raise SessionException(f"session_id=<{session_id}> | key holds something else: {error}") from error
        if not raw:
            return None
        try:
            fields = {as_text(k): as_text(v) for k, v in raw.items()}
        except UnicodeDecodeError as error:
            raise SessionException(f"session_id=<{session_id}> | stored session is not UTF-8 text: {error}") from error
        return _decode(session_id, fields)

    def version(self, session_id: str) -> int:
        """Return the stored version of the session (0 if there is none), without reading the session itself.

        Raises:
            SessionException: The stored version is not a number, or the key holds something else.
        """
        try:
            raw = self._client.hget(keys_for(session_id).session, "version")
        except redis.ResponseError as error:
            raise SessionException(f"session_id=<{session_id}> | key holds something else: {error}") from error
        if raw is None:
            return 0
        try:
            return int(raw)
        except ValueError as error:
            raise SessionException(f"session_id=<{session_id}>, field=<version> | not an integer: {raw!r}") from error

    def save(
        self,
        session_id: str,
        *,
        expected_version: int,
        messages: list[Message],
        agent_state: Mapping[str, Any],
        interrupt_state: Mapping[str, Any],
        ttl_seconds: float | None = None,
    ) -> int:
        """Write the session if it is still at ``expected_version`` (0: must not exist yet).

        Args:
            session_id: The session.
            expected_version: The version the caller's change is based on.
            messages: The whole conversation.
            agent_state: The agent's JSON state.
            interrupt_state: ``_InterruptState.to_dict()`` output.
            ttl_seconds: Expiry for this write (0: none); defaults to the store's. Not applied
                while the session is stopped on interrupts.

        Returns:
            The new version.

        Raises:
            ConflictError: Someone else wrote first; reload and redo the change.
            SessionException: The stored session is corrupted; it is left as it is.
            TypeError: A value is not JSON-serializable (nothing is written).
            ValueError: A value does not have the session's shape, or the TTL is negative or not finite
                (nothing is written).
        """
        keys = keys_for(session_id)
        ttl = self._ttl_seconds if ttl_seconds is None else ttl_seconds
        if ttl is not None and not (math.isfinite(ttl) and ttl >= 0):
            raise ValueError(f"ttl_seconds=<{ttl}> | must be a finite, non-negative number of seconds")
        args = _SAVE.arg_list(
            expected_version=expected_version,
            format=FORMAT,
            session_id=session_id,
            now_ms=self._now_ms(),
            # Any positive TTL expires: round up so a sub-millisecond TTL is not "never".
            ttl_ms=math.ceil(ttl * 1000) if ttl else 0,
            interrupted="1" if interrupt_state.get("activated") else "0",
            messages=_to_json(messages, "messages", session_id),
            agent_state=_to_json(dict(agent_state), "agent_state", session_id),
            interrupt_state=_to_json(dict(interrupt_state), "interrupt_state", session_id),
        )
        # Refuse what load() would refuse: a bad writer must not poison the session for everyone.
        try:
            check_messages(messages)
            check_agent_state(dict(agent_state))
            check_interrupt_state(dict(interrupt_state))
        except ShapeError as error:
            raise ValueError(f"session_id=<{session_id}> | refusing to store: {error}") from error
        status, value = self._run_script(self._save, session_id, _SAVE.key_list(**_named(keys)), args)
        if status == 0:
            raise ConflictError(session_id, expected_version, int(value))
        return int(value)

    @staticmethod
    def _run_script(
        script: Script, session_id: str, keys: list[str], args: Sequence[str | int | float | bytes]
    ) -> tuple[int, Any]:
        """Run a write script; map "the key holds something else" to ``SessionException``."""
        try:
            status, value = script(keys=keys, args=args)
        except redis.ResponseError as error:
            raise SessionException(f"session_id=<{session_id}> | key holds something else: {error}") from error
        if status == -1:
            raise SessionException(f"session_id=<{session_id}> | stored session is corrupted: {as_text(value)!r}")
        return int(status), value

    def delete(self, session_id: str, *, expected_version: int) -> None:
        """Remove the session if it is still at ``expected_version``.

        Raises:
            ConflictError: It changed since it was read.
            SessionException: The key holds corrupted or foreign data; it is left as it is.
        """
        keys = keys_for(session_id)
        args = _DELETE.arg_list(expected_version=expected_version, format=FORMAT, session_id=session_id)
        status, value = self._run_script(self._delete, session_id, _DELETE.key_list(**_named(keys)), args)
        if status == 0:
            raise ConflictError(session_id, expected_version, int(value))

    def interrupted_sessions(self, *, limit: int = 1000) -> list[str]:
        """Return the ids of sessions stopped on interrupts, the longest waiting first.

        Cost is proportional to the number of interrupted sessions, never to all keys: each shard's
        index gives its ``limit`` longest waiting, merged by time. Entries of sessions that expired are
        removed on the way.
        """
        if limit < 0:
            raise ValueError(f"limit=<{limit}> | must not be negative")
        if limit == 0:  # ZRANGE 0 -1 would mean "everything"
            return []
        reads = self._client.pipeline(transaction=False)
        for shard in range(shard_count()):
            reads.zrange(interrupted_index(shard), 0, limit - 1, withscores=True)
        per_shard: list[list[tuple[Any, float]]] = reads.execute()
        oldest = heapq.merge(*per_shard, key=lambda entry: (entry[1], entry[0]))  # one index's order: time, then id
        ids = [as_text(member) for member, _score in oldest if isinstance(member, bytes | str)][:limit]
        if not ids:
            return []
        pipeline = self._client.pipeline(transaction=False)
        for session_id in ids:
            keys = keys_for(session_id)
            # EVAL, not EVALSHA: a cluster pipeline refuses EVALSHA (and its eval() method).
            call_keys = _PRUNE.key_list(**_named(keys))
            pipeline.execute_command(  # type: ignore[no-untyped-call]
                "EVAL", _PRUNE.text, len(call_keys), *call_keys, *_PRUNE.arg_list(session_id=session_id)
            )
        pruned = pipeline.execute()
        return [session_id for session_id, removed in zip(ids, pruned, strict=True) if not removed]

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)


def _decode(session_id: str, fields: dict[str, str]) -> Session:
    def fail(field: str, problem: str) -> SessionException:
        return SessionException(f"session_id=<{session_id}>, field=<{field}> | {problem}")

    if fields.get("format") != FORMAT:
        raise fail("format", f"not a session of format {FORMAT} (found {fields.get('format')!r})")
    try:
        version = int(fields["version"])
        updated_at_ms = int(fields.get("updated_at_ms", "0"))
    except (KeyError, ValueError) as error:
        raise fail("version", "version or updated_at_ms missing or not an integer") from error

    decoded: dict[str, Any] = {}
    for name in ("messages", "agent_state", "interrupt_state"):
        try:
            decoded[name] = json.loads(fields[name])
        except KeyError as error:
            raise fail(name, "missing") from error
        except ValueError as error:
            raise fail(name, f"not valid JSON: {error}") from error
    try:
        return Session(
            session_id=session_id,
            version=version,
            messages=check_messages(decoded["messages"]),
            agent_state=check_agent_state(decoded["agent_state"]),
            interrupt_state=check_interrupt_state(decoded["interrupt_state"]),
            updated_at_ms=updated_at_ms,
        )
    except ShapeError as error:
        raise fail(error.field, error.problem) from error
