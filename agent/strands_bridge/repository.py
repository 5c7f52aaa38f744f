"""A Strands ``SessionRepository`` on Signoff's Redis: sessions, agents, messages and multi-agents.

The records, their keys and how they read back are ``agent.strands_bridge.records`` (a Swarm's or Graph's:
``agent.strands_bridge.multi_agent_records``). Creating is refused when the record exists (``ConflictError``);
updating in place (``update_agent``, ``update_message``, ``update_multi_agent``) is a Lua compare-and-set on the
version this repository last read or wrote: a stale writer gets ``ConflictError``, never a silent overwrite.

The mirror (``agent.strands_bridge.mirror``): given a ``SessionStore``, every write of one agent
(``mirror_agent_id``, Strands' ``"default"`` unless told otherwise), and of every multi-agent, is also written
to the session's ``state.store`` hash (messages, agent state, interrupt state) with the store's own
compare-and-set. That is what makes a Strands agent, Swarm or Graph look like any other session to the bot:
its version, the ``signoff:interrupted`` index, and ``SessionStore.load`` all work unchanged. The Strands
records stay the source of truth for restoring it; the mirror is written just after them (two writes, not one
transaction).
"""

from typing import Any, Final

import redis
from strands.session.session_repository import SessionRepository

from agent.strands_bridge.mirror import Mirror, MirrorView
from agent.strands_bridge.multi_agent_records import MultiAgentRecords, SignoffSide
from agent.strands_bridge.records import (
    CREATE_RECORD,
    UPDATE_RECORD,
    RecordConflictError,
    compare_and_set,
    corrupted,
    decode_agent,
    decode_message,
    decode_session,
    encode,
    guarded,
    strands_key,
    text_of,
)
from state.lua import LuaScript
from state.store import SessionStore

DEFAULT_AGENT_ID: Final = "default"
"""The id Strands gives an agent built without ``agent_id``."""

_UPDATE_MESSAGE: Final = LuaScript(
    "agent.strands_bridge",
    "update_message",
    keys=("messages_key", "versions_key"),
    args=("message_id", "expected_version", "record"),
)
SCRIPTS: Final = (CREATE_RECORD, UPDATE_RECORD, _UPDATE_MESSAGE)
"""The repository's scripts (``.lua`` files of this package)."""


class RedisSessionRepository(SessionRepository):  # type: ignore[misc]
    """Strands sessions, agents, messages and multi-agents (Swarms, Graphs) in Redis, with compare-and-set updates.

    One repository serves one process; it remembers the versions it read so its updates can be
    compared. Build one per agent (as ``RepositorySessionManager`` expects), or share one between
    agents of different sessions.

    Args:
        client: A redis-py client (bytes or str responses).
        mirror: Also write ``mirror_agent_id``'s view, and every multi-agent's, to this store (see the module
            docstring).
        mirror_agent_id: The agent mirrored (``"default"``: Strands' id for an unnamed agent).
    """

    def __init__(
        self, client: redis.Redis, *, mirror: SessionStore | None = None, mirror_agent_id: str = DEFAULT_AGENT_ID
    ) -> None:
        """Register the scripts; nothing is sent until the first call."""
        self._client = client
        self._mirror = Mirror(mirror) if mirror is not None else None
        self._mirror_agent_id = mirror_agent_id
        self._create_agent = client.register_script(CREATE_RECORD.text)
        self._update_agent = client.register_script(UPDATE_RECORD.text)
        self._update_message = client.register_script(_UPDATE_MESSAGE.text)
        self._multi_agents = MultiAgentRecords(
            client,
            create=self._create_agent,
            update=self._update_agent,
            mirror=Mirror(mirror) if mirror is not None else None,  # its own views: a session mirrors one of them
        )
        self._agent_versions: dict[tuple[str, str], int] = {}
        self._agent_created_at: dict[tuple[str, str], str] = {}
        self._message_versions: dict[tuple[str, str, int], int] = {}
        self._message_created_at: dict[tuple[str, str, int], str] = {}

    # --- sessions ------------------------------------------------------------------------------

    def create_session(self, session: Any, **kwargs: Any) -> Any:
        """Store a new session.

        Raises:
            RecordConflictError: The session exists already.
        """
        session_id: str = session.session_id
        key = strands_key(session_id, "session")
        created = guarded(session_id, "session", lambda: self._client.set(key, encode(session.to_dict()), nx=True))
        if not created:
            raise RecordConflictError(session_id, "session", 0, 1)
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Any:
        """The stored session, or ``None``."""
        key = strands_key(session_id, "session")
        raw = guarded(session_id, "session", lambda: self._client.get(key))
        if raw is None:
            return None
        return decode_session(session_id, raw)

    # --- agents --------------------------------------------------------------------------------

    def create_agent(self, session_id: str, session_agent: Any, **kwargs: Any) -> None:
        """Store a new agent of the session.

        Raises:
            RecordConflictError: The agent exists already.
        """
        agent_id: str = session_agent.agent_id
        record = f"agent:{agent_id}"
        key = strands_key(session_id, "agent", agent_id)
        text = encode(session_agent.to_dict())
        created = guarded(
            session_id,
            record,
            lambda: self._create_agent(
                keys=CREATE_RECORD.key_list(record_key=key), args=CREATE_RECORD.arg_list(record=text)
            ),
        )
        if not int(created):
            raise RecordConflictError(session_id, record, 0, 1)
        self._agent_versions[(session_id, agent_id)] = 1
        self._agent_created_at[(session_id, agent_id)] = session_agent.created_at
        if (mirror := self._mirror_of(agent_id)) is not None:
            view = self._load_view(mirror, session_id, agent_id)
            self._set_agent_view(view, session_agent)
            mirror.write(session_id, view)

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> Any:
        """The stored agent, or ``None``; its version becomes the base of the next ``update_agent``."""
        key = strands_key(session_id, "agent", agent_id)
        record = f"agent:{agent_id}"
        fields = guarded(session_id, record, lambda: self._client.hgetall(key))
        if not fields:
            return None
        version, session_agent = decode_agent(session_id, agent_id, {text_of(k): text_of(v) for k, v in fields.items()})
        self._agent_versions[(session_id, agent_id)] = version
        self._agent_created_at[(session_id, agent_id)] = session_agent.created_at
        if (mirror := self._mirror_of(agent_id)) is not None:
            mirror.views.pop(session_id, None)
            self._load_view(mirror, session_id, agent_id)
        return session_agent

    def update_agent(self, session_id: str, session_agent: Any, **kwargs: Any) -> None:
        """Replace the agent if it is still at the version this repository last read or wrote.

        Raises:
            RecordConflictError: Another writer updated it since.
            CorruptedSessionError: The agent does not exist, or its record is corrupted.
        """
        agent_id: str = session_agent.agent_id
        record = f"agent:{agent_id}"
        slot = (session_id, agent_id)
        if slot not in self._agent_versions:
            self.read_agent(session_id, agent_id)  # never read here: compare with what is stored now
        if slot not in self._agent_versions:
            raise corrupted(session_id, record, "agent does not exist")
        session_agent.created_at = self._agent_created_at.get(slot, session_agent.created_at)
        key = strands_key(session_id, "agent", agent_id)
        expected = self._agent_versions[slot]
        text = encode(session_agent.to_dict())
        self._agent_versions[slot] = compare_and_set(
            session_id,
            record,
            expected,
            lambda: self._update_agent(
                keys=UPDATE_RECORD.key_list(record_key=key),
                args=UPDATE_RECORD.arg_list(expected_version=expected, record=text),
            ),
            missing="agent does not exist",
        )
        if (mirror := self._mirror_of(agent_id)) is not None:
            view = self._load_view(mirror, session_id, agent_id)
            self._set_agent_view(view, session_agent)
            mirror.write(session_id, view)

    # --- messages ------------------------------------------------------------------------------

    def create_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        """Store a new message of the agent.

        Raises:
            RecordConflictError: A message with this id exists already (another writer appended).
        """
        message_id: int = session_message.message_id
        record = f"message:{agent_id}:{message_id}"
        key = strands_key(session_id, "messages", agent_id)
        text = encode(session_message.to_dict())
        created = guarded(session_id, record, lambda: self._client.hsetnx(key, str(message_id), text))
        if not created:
            raise RecordConflictError(session_id, record, 0, 1)
        self._message_versions[(session_id, agent_id, message_id)] = 1
        self._message_created_at[(session_id, agent_id, message_id)] = session_message.created_at
        if (mirror := self._mirror_of(agent_id)) is not None:
            view = self._load_view(mirror, session_id, agent_id)
            view.messages[message_id] = session_message.to_message()
            mirror.write(session_id, view)

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> Any:
        """The stored message, or ``None``."""
        record = f"message:{agent_id}:{message_id}"
        messages_key = strands_key(session_id, "messages", agent_id)
        versions_key = strands_key(session_id, "message_versions", agent_id)

        def read() -> list[Any]:
            pipeline = self._client.pipeline(transaction=False)
            pipeline.hget(messages_key, str(message_id))
            pipeline.hget(versions_key, str(message_id))
            return pipeline.execute()

        raw, raw_version = guarded(session_id, record, read)
        if raw is None:
            return None
        message = decode_message(session_id, agent_id, str(message_id), raw)
        self._remember_message(session_id, agent_id, message, raw_version)
        return message

    def update_message(self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any) -> None:
        """Replace a message (Strands does it to redact) if unchanged since this repository read or wrote it.

        Raises:
            RecordConflictError: Another writer updated it since.
            CorruptedSessionError: The message does not exist, or its version is corrupted.
        """
        message_id: int = session_message.message_id
        record = f"message:{agent_id}:{message_id}"
        slot = (session_id, agent_id, message_id)
        if slot not in self._message_versions and self.read_message(session_id, agent_id, message_id) is None:
            raise corrupted(session_id, record, "message does not exist")
        session_message.created_at = self._message_created_at.get(slot, session_message.created_at)
        expected = self._message_versions[slot]
        keys = _UPDATE_MESSAGE.key_list(
            messages_key=strands_key(session_id, "messages", agent_id),
            versions_key=strands_key(session_id, "message_versions", agent_id),
        )
        text = encode(session_message.to_dict())
        self._message_versions[slot] = compare_and_set(
            session_id,
            record,
            expected,
            lambda: self._update_message(
                keys=keys,
                args=_UPDATE_MESSAGE.arg_list(message_id=message_id, expected_version=expected, record=text),
            ),
            missing="message does not exist",
        )
        if (mirror := self._mirror_of(agent_id)) is not None:
            view = self._load_view(mirror, session_id, agent_id)
            view.messages[message_id] = session_message.to_message()
            mirror.write(session_id, view)

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[Any]:
        """The agent's messages in order of id, from ``offset``, at most ``limit`` of them."""
        if offset < 0 or (limit is not None and limit < 0):
            raise ValueError(f"offset=<{offset}>, limit=<{limit}> | must not be negative")
        messages = self._read_all_messages(session_id, agent_id)
        end = None if limit is None else offset + limit
        return messages[offset:end]

    # --- multi-agents (Swarms, Graphs) ----------------------------------------------------------

    def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Store a new multi-agent's state (``serialize_state()``) in the session.

        Raises:
            RecordConflictError: It exists already.
        """
        self._multi_agents.create(session_id, multi_agent)

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        """The multi-agent's stored state, or ``None``; its version becomes the base of the next update."""
        return self._multi_agents.read(session_id, multi_agent_id)

    def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Replace the multi-agent's state if it is still at the version this repository last read or wrote.

        Raises:
            RecordConflictError: Another writer updated it since.
            CorruptedSessionError: It does not exist, or its record is corrupted.
        """
        self._multi_agents.update(session_id, multi_agent)

    def signoff_side(self, session_id: str, multi_agent_id: str) -> SignoffSide:
        """What Signoff keeps beside a multi-agent this repository read or created; written with its next update.

        Raises:
            KeyError: This repository has neither read nor created it.
        """
        return self._multi_agents.side(session_id, multi_agent_id)

    # --- internals -----------------------------------------------------------------------------

    def _read_all_messages(self, session_id: str, agent_id: str) -> list[Any]:
        messages_key = strands_key(session_id, "messages", agent_id)
        versions_key = strands_key(session_id, "message_versions", agent_id)

        def read() -> list[Any]:
            pipeline = self._client.pipeline(transaction=False)
            pipeline.hgetall(messages_key)
            pipeline.hgetall(versions_key)
            return pipeline.execute()

        raw_messages, raw_versions = guarded(session_id, f"messages:{agent_id}", read)
        versions = {text_of(k): v for k, v in raw_versions.items()}
        decoded: list[Any] = []
        for raw_id, raw in raw_messages.items():
            message_id = text_of(raw_id)
            message = decode_message(session_id, agent_id, message_id, raw)
            self._remember_message(session_id, agent_id, message, versions.get(message_id))
            decoded.append(message)
        decoded.sort(key=lambda message: message.message_id)
        return decoded

    def _remember_message(self, session_id: str, agent_id: str, message: Any, raw_version: Any) -> None:
        record = f"message:{agent_id}:{message.message_id}"
        try:
            version = 1 if raw_version is None else int(text_of(raw_version))
        except ValueError as error:
            raise corrupted(session_id, record, f"version is not an integer: {raw_version!r}") from error
        self._message_versions[(session_id, agent_id, message.message_id)] = version
        self._message_created_at[(session_id, agent_id, message.message_id)] = message.created_at

    def _mirror_of(self, agent_id: str) -> Mirror | None:
        """The mirror, if this agent's writes are mirrored."""
        return self._mirror if agent_id == self._mirror_agent_id else None

    def _load_view(self, mirror: Mirror, session_id: str, agent_id: str) -> MirrorView:
        """The mirror's view of the session, read once (its version is the base of the next write)."""
        view = mirror.views.get(session_id)
        if view is not None:
            return view
        view = MirrorView(version=mirror.base_version(session_id))
        for message in self._read_all_messages(session_id, agent_id):
            view.messages[message.message_id] = message.to_message()
        fields = guarded(
            session_id, f"agent:{agent_id}", lambda: self._client.hgetall(strands_key(session_id, "agent", agent_id))
        )
        if fields:
            _, session_agent = decode_agent(session_id, agent_id, {text_of(k): text_of(v) for k, v in fields.items()})
            self._set_agent_view(view, session_agent)
        mirror.views[session_id] = view
        return view

    @staticmethod
    def _set_agent_view(view: MirrorView, session_agent: Any) -> None:
        view.agent_state = dict(session_agent.state)
        interrupt_state = session_agent._internal_state.get("interrupt_state")
        if interrupt_state is not None:
            view.interrupt_state = interrupt_state
