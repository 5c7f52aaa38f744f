"""A Swarm's or Graph's record in Redis: its serialized state and Signoff's side, compared and set as one.

One hash per multi-agent, ``strands_key(session_id, "multi_agent", <id>)``, laid out as an agent's: ``version``
and ``record``. The record is ``{"state": <the orchestrator's serialize_state()>, "signoff": {"state": {...},
"messages": [...]}}``. Signoff's side (``SignoffSide``) holds what the bot keeps of a multi-agent and Strands'
state has no place for (the runner's JSON state, the thread's transcript); both are written in one
compare-and-set, so a worker that rebuilds the orchestrator reads back the one with the other.

Mirrored into the session's ``state.store`` hash (``agent.strands_bridge.mirror``): the transcript as its
messages, the side's state as its agent state, and the orchestrator's interrupt state (activated while it
waits), so the bot sees a Swarm or Graph as it sees any session.
"""

from dataclasses import dataclass, field
from typing import Any

import redis
from redis.commands.core import Script
from strands.multiagent.base import NodeResult, Status

from agent.strands_bridge.mirror import Mirror, MirrorView
from agent.strands_bridge.records import (
    CREATE_RECORD,
    UPDATE_RECORD,
    RecordConflictError,
    compare_and_set,
    corrupted,
    encode,
    guarded,
    strands_key,
    text_of,
    versioned_record,
)
from state.shapes import Message
from state.validation import ShapeError, check_agent_state, check_interrupt_state, check_messages


@dataclass
class SignoffSide:
    """What Signoff keeps beside a multi-agent's own state, written with it.

    Attributes:
        state: The runner's JSON state (``MultiAgentRunnable.state``).
        messages: The thread's transcript: each prompt, and each final output.
    """

    state: dict[str, Any] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)


def decode_multi_agent(
    session_id: str, multi_agent_id: str, fields: dict[str, str]
) -> tuple[int, dict[str, Any], SignoffSide]:
    """The version, the orchestrator's state and Signoff's side stored in a multi-agent's hash (``fields``, decoded).

    Raises:
        CorruptedSessionError: ``fields`` are not multi-agent ``multi_agent_id`` of ``session_id`` with valid state.
    """
    record = f"multi_agent:{multi_agent_id}"
    version, data = versioned_record(session_id, record, fields)
    payload = data.get("state")
    if not isinstance(payload, dict):
        raise corrupted(session_id, record, "field=<state> | not a JSON object")
    side = data.get("signoff")
    if not isinstance(side, dict):
        raise corrupted(session_id, record, "field=<signoff> | not a JSON object")
    try:
        state = check_agent_state(side.get("state"), prefix="signoff.state")
        messages = check_messages(side.get("messages"), prefix="signoff.messages")
        internal = payload.get("_internal_state", {})
        if not isinstance(internal, dict):
            raise ShapeError("state._internal_state", "not a JSON object")
        if "interrupt_state" in internal:
            check_interrupt_state(internal["interrupt_state"], prefix="state._internal_state.interrupt_state")
    except ShapeError as error:
        raise corrupted(session_id, record, str(error)) from error
    if payload.get("id") != multi_agent_id:
        raise corrupted(session_id, record, f"stored under another id ({payload.get('id')!r})")
    _check_restorable(session_id, record, payload)
    return version, payload, SignoffSide(state, messages)


def _check_restorable(session_id: str, record: str, payload: dict[str, Any]) -> None:
    """Refuse what ``deserialize_state`` would choke on deep inside Strands: a status, a node's result, the frontier."""
    try:
        Status(payload.get("status", Status.PENDING.value))
        results = payload.get("node_results", {})
        if not isinstance(results, dict):
            raise TypeError("node_results is not a JSON object")
        for entry in results.values():
            NodeResult.from_dict(entry)
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        raise corrupted(session_id, record, f"not a Strands multi-agent state: {error}") from error
    frontier = payload.get("next_nodes_to_execute", [])
    if not isinstance(frontier, list) or not all(isinstance(node_id, str) for node_id in frontier):
        raise corrupted(session_id, record, "field=<state.next_nodes_to_execute> | not a list of node ids")


class MultiAgentRecords:
    """The multi-agent half of ``RedisSessionRepository``: it remembers the versions it read, as the other half does.

    Args:
        client: A redis-py client (bytes or str responses).
        create: The repository's script creating a versioned record hash.
        update: The repository's compare-and-set script on a versioned record hash.
        mirror: Where multi-agents are mirrored for the bot (``None``: nowhere).
    """

    def __init__(self, client: redis.Redis, *, create: Script, update: Script, mirror: Mirror | None) -> None:
        """Keep the collaborators; nothing is sent until the first call."""
        self._client = client
        self._create = create
        self._update = update
        self._mirror = mirror
        self._versions: dict[tuple[str, str], int] = {}
        self._sides: dict[tuple[str, str], SignoffSide] = {}

    def create(self, session_id: str, multi_agent: Any) -> None:
        """Store a new multi-agent, with an empty side.

        Raises:
            RecordConflictError: It exists already.
        """
        multi_agent_id: str = multi_agent.id
        slot, record = (session_id, multi_agent_id), f"multi_agent:{multi_agent_id}"
        key = strands_key(session_id, "multi_agent", multi_agent_id)
        payload = multi_agent.serialize_state()
        side = SignoffSide()
        text = encode({"state": payload, "signoff": _side_dict(side)})
        created = guarded(
            session_id,
            record,
            lambda: self._create(keys=CREATE_RECORD.key_list(record_key=key), args=CREATE_RECORD.arg_list(record=text)),
        )
        if not int(created):
            raise RecordConflictError(session_id, record, 0, 1)
        self._versions[slot] = 1
        self._sides[slot] = side
        self._mirror_write(session_id, payload, side)

    def read(self, session_id: str, multi_agent_id: str) -> dict[str, Any] | None:
        """The stored orchestrator state, or ``None``; its version becomes the base of the next ``update``."""
        key = strands_key(session_id, "multi_agent", multi_agent_id)
        fields = guarded(session_id, f"multi_agent:{multi_agent_id}", lambda: self._client.hgetall(key))
        if not fields:
            return None
        decoded = {text_of(name): text_of(value) for name, value in fields.items()}
        version, payload, side = decode_multi_agent(session_id, multi_agent_id, decoded)
        self._versions[(session_id, multi_agent_id)] = version
        self._sides[(session_id, multi_agent_id)] = side
        if self._mirror is not None:
            self._mirror.views.pop(session_id, None)  # the next mirror write compares with the store as it is now
        return payload

    def update(self, session_id: str, multi_agent: Any) -> None:
        """Replace the state, and write the side, if still at the version last read or written here.

        Raises:
            RecordConflictError: Another writer updated it since.
            CorruptedSessionError: It does not exist, or its record is corrupted.
        """
        multi_agent_id: str = multi_agent.id
        slot, record = (session_id, multi_agent_id), f"multi_agent:{multi_agent_id}"
        if slot not in self._versions:
            self.read(session_id, multi_agent_id)  # never read here: compare with what is stored now
        if slot not in self._versions:
            raise corrupted(session_id, record, "multi-agent does not exist")
        key = strands_key(session_id, "multi_agent", multi_agent_id)
        payload = multi_agent.serialize_state()
        side = self._sides[slot]
        text = encode({"state": payload, "signoff": _side_dict(side)})
        expected = self._versions[slot]
        self._versions[slot] = compare_and_set(
            session_id,
            record,
            expected,
            lambda: self._update(
                keys=UPDATE_RECORD.key_list(record_key=key),
                args=UPDATE_RECORD.arg_list(expected_version=expected, record=text),
            ),
            missing="multi-agent does not exist",
        )
        self._mirror_write(session_id, payload, side)

    def side(self, session_id: str, multi_agent_id: str) -> SignoffSide:
        """Signoff's side of a multi-agent read or created here (mutable: written with the next ``update``).

        Raises:
            KeyError: Neither read nor created here.
        """
        return self._sides[(session_id, multi_agent_id)]

    def _mirror_write(self, session_id: str, payload: dict[str, Any], side: SignoffSide) -> None:
        if self._mirror is None:
            return
        view = self._mirror.views.get(session_id)
        if view is None:
            view = self._mirror.views[session_id] = MirrorView(version=self._mirror.base_version(session_id))
        view.messages = dict(enumerate(side.messages))
        view.agent_state = dict(side.state)
        interrupt_state = payload.get("_internal_state", {}).get("interrupt_state")
        if interrupt_state is not None:
            view.interrupt_state = interrupt_state
        self._mirror.write(session_id, view)


def _side_dict(side: SignoffSide) -> dict[str, Any]:
    return {"state": side.state, "messages": side.messages}
