"""The Strands records of a session in Redis: their keys, their errors, and reading them back.

Key layout (built by ``strands_key`` only, which validates the session id with
``state.store.keys_for``; every key carries the hash tag of the session's shard, as the session's own keys do)::

    signoff:{<shard tag>}:{<session_id>}:strands:session                  string  Strands ``Session`` (JSON)
    signoff:{<shard tag>}:{<session_id>}:strands:agent:<agent_id>         hash    version, record (``SessionAgent``)
    signoff:{<shard tag>}:{<session_id>}:strands:messages:<agent_id>      hash    <message_id> -> ``SessionMessage``
    signoff:{<shard tag>}:{<session_id>}:strands:message_versions:<agent_id>  hash  <message_id> -> version (or 1)
    signoff:{<shard tag>}:{<session_id>}:strands:multi_agent:<multi_agent_id>  hash  version, record (Swarm, Graph)

``RedisSessionRepository`` (``agent.strands_bridge.repository``; ``agent.strands_bridge.multi_agent_records`` for
Swarms and Graphs) is the only writer of these keys. Stored data that is not what it wrote (bad JSON, wrong
shapes, another Redis type) raises ``CorruptedSessionError``, a ``state.SessionException`` that is also a
Strands ``SessionException``; nothing is deleted or overwritten.
"""

import json
from collections.abc import Callable
from typing import Any, Final

import redis
from strands.types.exceptions import SessionException as StrandsSessionException
from strands.types.session import Session as StrandsSession
from strands.types.session import SessionAgent, SessionMessage, SessionType

from state.errors import ConflictError, SessionException
from state.lua import LuaScript
from state.store import keys_for
from state.validation import ShapeError, check_agent_state, check_interrupt_state, check_messages

_KINDS: Final = ("session", "agent", "messages", "message_versions", "multi_agent")
CREATE_RECORD: Final = LuaScript("agent.strands_bridge", "create_record", keys=("record_key",), args=("record",))
"""Creates a versioned record's hash (an agent's, a multi-agent's) at version 1."""
UPDATE_RECORD: Final = LuaScript(
    "agent.strands_bridge", "update_record", keys=("record_key",), args=("expected_version", "record")
)
"""Updates a versioned record's hash if it is still at the version expected (compare and set)."""
_MAX_AGENT_ID_LENGTH: Final = 256


class CorruptedSessionError(SessionException, StrandsSessionException):  # type: ignore[misc]
    """Stored Strands data cannot be used as it is; it is left in place.

    Both a ``state.SessionException`` and a ``strands.types.exceptions.SessionException``.
    """


class RecordConflictError(ConflictError):
    """A create or compare-and-set update found the record in another state than expected.

    Attributes:
        record: Which record: ``session``, ``agent:<id>`` or ``message:<agent id>:<message id>``.
    """

    def __init__(self, session_id: str, record: str, expected_version: int, actual_version: int) -> None:
        """Name the record and both versions (0: did not exist)."""
        super().__init__(session_id, expected_version, actual_version)
        self.record = record
        self.args = (
            f"session_id=<{session_id}>, record=<{record}>, expected_version=<{expected_version}>, "
            f"actual_version=<{actual_version}> | record changed since it was read",
        )


def strands_key(session_id: str, kind: str, agent_id: str | None = None) -> str:
    """The Redis key of one kind of Strands record of a session; the only place these keys are built.

    Raises:
        ValueError: Bad session id (see ``state.store.keys_for``), unknown kind, or a bad or
            missing agent id (agent and multi-agent ids follow the session id rules).
    """
    session_key = keys_for(session_id).session
    base = session_key.removesuffix(":session") + ":strands"
    if kind not in _KINDS:
        raise ValueError(f"kind=<{kind}> | must be one of {', '.join(_KINDS)}")
    if kind == "session":
        if agent_id is not None:
            raise ValueError("kind=<session> | takes no agent id")
        return f"{base}:session"
    if not agent_id or len(agent_id) > _MAX_AGENT_ID_LENGTH:
        raise ValueError(f"agent_id=<{agent_id!r}> | must be 1 to {_MAX_AGENT_ID_LENGTH} characters")
    if not agent_id.isprintable() or any(char.isspace() or char in "{}" for char in agent_id):
        raise ValueError(f"agent_id=<{agent_id!r}> | must not contain braces, spaces or control characters")
    return f"{base}:{kind}:{agent_id}"


def guarded(session_id: str, record: str, operation: Callable[[], Any]) -> Any:
    """Run one Redis ``operation`` on ``record``; a key holding another type is ``CorruptedSessionError``."""
    try:
        return operation()
    except redis.ResponseError as error:
        raise corrupted(session_id, record, f"key holds something else: {error}") from error


def compare_and_set(session_id: str, record: str, expected: int, operation: Callable[[], Any], *, missing: str) -> int:
    """Run a compare-and-set script written against version ``expected``; the record's new version.

    The script answers ``{1, new}``, ``{0, actual}`` on conflict, ``{-2, 0}`` when the record is missing and
    ``{-1, what}`` when its version is corrupted.

    Raises:
        CorruptedSessionError: The record does not exist (``missing`` says so), or its version is corrupted.
        RecordConflictError: Another writer updated it since ``expected``.
    """
    status, value = guarded(session_id, record, operation)
    if int(status) == -2:
        raise corrupted(session_id, record, missing)
    if int(status) == -1:
        raise corrupted(session_id, record, f"version is corrupted: {text_of(value)!r}")
    if int(status) == 0:
        raise RecordConflictError(session_id, record, expected, int(value))
    return int(value)


def decode_session(session_id: str, raw: bytes | str) -> Any:
    """The Strands ``Session`` stored as ``raw``.

    Raises:
        CorruptedSessionError: ``raw`` is not a session of ``session_id``.
    """
    data = json_object(session_id, "session", raw)
    try:
        session = StrandsSession.from_dict(data)
        session.session_type = SessionType(session.session_type)
    except (TypeError, ValueError) as error:
        raise corrupted(session_id, "session", f"not a Strands session: {error}") from error
    if session.session_id != session_id:
        raise corrupted(session_id, "session", f"stored under another session id ({session.session_id!r})")
    return session


def text_of(value: bytes | str) -> str:
    """``value`` as text; bytes that are not UTF-8 are ``CorruptedSessionError`` (never ours)."""
    if isinstance(value, str):
        return value
    try:
        return value.decode()
    except UnicodeDecodeError as error:  # foreign bytes in a key of ours: corruption, not a crash
        raise CorruptedSessionError(f"stored value is not UTF-8 text: {error}") from error


def encode(data: dict[str, Any]) -> str:
    """A record as stored: compact JSON, non-ASCII kept, no NaN."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def corrupted(session_id: str, record: str, problem: str) -> CorruptedSessionError:
    """The error for ``record`` of ``session_id`` that cannot be used because of ``problem``."""
    return CorruptedSessionError(f"session_id=<{session_id}>, record=<{record}> | {problem}")


def json_object(session_id: str, record: str, raw: bytes | str) -> dict[str, Any]:
    """``raw`` parsed as a JSON object.

    Raises:
        CorruptedSessionError: ``raw`` is not UTF-8 JSON text holding an object.
    """
    try:
        data = json.loads(text_of(raw))
    except (UnicodeDecodeError, ValueError) as error:
        raise corrupted(session_id, record, f"not valid JSON: {error}") from error
    if not isinstance(data, dict):
        raise corrupted(session_id, record, f"not a JSON object (found {type(data).__name__})")
    return data


def versioned_record(session_id: str, record: str, fields: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """The version and the JSON object of a record's hash (``fields``, decoded): an agent's, a multi-agent's.

    Raises:
        CorruptedSessionError: ``record`` of ``session_id`` lacks an integer version or a JSON object record.
    """
    try:
        version = int(fields["version"])
    except (KeyError, ValueError) as error:
        raise corrupted(session_id, record, "version missing or not an integer") from error
    if "record" not in fields:
        raise corrupted(session_id, record, "record missing")
    return version, json_object(session_id, record, fields["record"])


def decode_agent(session_id: str, agent_id: str, fields: dict[str, str]) -> tuple[int, Any]:
    """The version and the Strands ``SessionAgent`` of an agent's hash (``fields``, decoded).

    Raises:
        CorruptedSessionError: ``fields`` are not an agent ``agent_id`` of ``session_id`` with valid state.
    """
    record = f"agent:{agent_id}"
    version, data = versioned_record(session_id, record, fields)
    for name in ("state", "conversation_manager_state", "_internal_state"):
        if not isinstance(data.get(name, {}), dict):
            raise corrupted(session_id, record, f"field=<{name}> | not a JSON object")
    try:
        check_agent_state(data.get("state"), prefix="state")
        interrupt_state = data.get("_internal_state", {}).get("interrupt_state")
        if interrupt_state is not None:
            check_interrupt_state(interrupt_state, prefix="_internal_state.interrupt_state")
        session_agent = SessionAgent.from_dict(data)
    except ShapeError as error:
        raise corrupted(session_id, record, str(error)) from error
    except TypeError as error:
        raise corrupted(session_id, record, f"not a Strands agent: {error}") from error
    if session_agent.agent_id != agent_id:
        raise corrupted(session_id, record, f"stored under another agent id ({session_agent.agent_id!r})")
    return version, session_agent


def decode_message(session_id: str, agent_id: str, message_id: str, raw: bytes | str) -> Any:
    """The Strands ``SessionMessage`` stored as ``raw``.

    Raises:
        CorruptedSessionError: ``raw`` is not message ``message_id`` of ``agent_id``, in Converse shapes.
    """
    record = f"message:{agent_id}:{message_id}"
    data = json_object(session_id, record, raw)
    try:
        check_messages([data.get("message")], prefix="message")
        if data.get("redact_message") is not None:
            check_messages([data["redact_message"]], prefix="redact_message")
        message = SessionMessage.from_dict(data)
    except ShapeError as error:
        raise corrupted(session_id, record, str(error)) from error
    except TypeError as error:
        raise corrupted(session_id, record, f"not a Strands message: {error}") from error
    if str(message.message_id) != message_id or isinstance(message.message_id, bool):
        raise corrupted(session_id, record, f"stored under another message id ({message.message_id!r})")
    return message
