"""``RedisSessionRepository`` for Swarms and Graphs: Strands' ``create/read/update_multi_agent`` on Signoff's Redis.

The multi-agents stored are real Strands ``Swarm`` objects (their own ``serialize_state()``), on one server and on a
cluster.
"""

import json
from collections.abc import Callable
from typing import Any

import pytest
import redis
import strands
from redis.crc import key_slot
from strands.multiagent import Swarm
from strands.types.exceptions import SessionException as StrandsSessionException

from agent import ScriptedModel
from agent.strands_bridge import CorruptedSessionError, RecordConflictError, RedisSessionRepository, strands_key
from state import ConflictError, SessionException, SessionStore, keys_for
from tests.redis_targets import every_key, on_both
from tests.strands.agents import StrandsScriptedModel
from tests.strands.multi_agents import swarm_tool_agent

pytest_generate_tests = on_both

SID = "T0TEST:C0OPS:1700000000.000400"
KEY = strands_key(SID, "multi_agent", "default_swarm")


def _swarm() -> Swarm:
    """A one-node Swarm persisted by nobody: the repository is called by hand."""
    node = strands.Agent(name="solo", model=StrandsScriptedModel(ScriptedModel([])), callback_handler=None)
    return Swarm(nodes=[node])


def _record(client: redis.Redis) -> dict[str, Any]:
    raw = client.hget(KEY, "record")
    assert raw is not None
    loaded: dict[str, Any] = json.loads(raw)
    return loaded


def test_create_read_update_round_trip_in_the_sessions_slot(
    redis_client: redis.Redis,
) -> None:
    repository = RedisSessionRepository(redis_client)
    swarm = _swarm()
    assert repository.read_multi_agent(SID, swarm.id) is None

    repository.create_multi_agent(SID, swarm)
    assert repository.read_multi_agent(SID, swarm.id) == swarm.serialize_state()

    swarm.state.execution_time = 1234  # what a run changes, as Strands serializes it
    repository.update_multi_agent(SID, swarm)
    stored = repository.read_multi_agent(SID, swarm.id)
    assert stored is not None
    assert stored["execution_time"] == 1234
    assert redis_client.hget(KEY, "version") == b"2"

    # Signoff's side is written with it, and read back by another repository.
    repository.signoff_side(SID, swarm.id).state["signoff_prompt_ids"] = ["p1"]
    repository.update_multi_agent(SID, swarm)
    other = RedisSessionRepository(redis_client)
    other.read_multi_agent(SID, swarm.id)
    assert other.signoff_side(SID, swarm.id).state == {"signoff_prompt_ids": ["p1"]}

    keys = [key.decode() if isinstance(key, bytes) else key for key in every_key(redis_client)]
    assert keys == [KEY]
    assert KEY.startswith(keys_for(SID).session.removesuffix(":session") + ":strands:multi_agent:")
    assert key_slot(KEY.encode()) == key_slot(keys_for(SID).session.encode())


def test_a_stale_writer_gets_a_conflict_never_an_overwrite(redis_client: redis.Redis) -> None:
    first, second = RedisSessionRepository(redis_client), RedisSessionRepository(redis_client)
    swarm = _swarm()
    first.create_multi_agent(SID, swarm)
    second.read_multi_agent(SID, swarm.id)

    swarm.state.execution_time = 2
    second.update_multi_agent(SID, swarm)
    swarm.state.execution_time = 1
    with pytest.raises(RecordConflictError) as raised:
        first.update_multi_agent(SID, swarm)
    assert isinstance(raised.value, ConflictError)
    assert (raised.value.record, raised.value.expected_version, raised.value.actual_version) == (
        "multi_agent:default_swarm",
        1,
        2,
    )
    assert _record(redis_client)["state"]["execution_time"] == 2

    with pytest.raises(RecordConflictError):
        second.create_multi_agent(SID, swarm)


def test_an_update_sent_again_after_its_reply_was_lost_is_answered_as_written(redis_client: redis.Redis) -> None:
    sent, lost_reply = RedisSessionRepository(redis_client), RedisSessionRepository(redis_client)
    swarm = _swarm()
    sent.create_multi_agent(SID, swarm)
    lost_reply.read_multi_agent(SID, swarm.id)

    sent.update_multi_agent(SID, swarm)
    lost_reply.update_multi_agent(SID, swarm)  # the same state again: its own write, not a conflict

    assert redis_client.hget(KEY, "version") == b"2"


def test_updating_a_multi_agent_never_created_is_refused(redis_client: redis.Redis) -> None:
    with pytest.raises(CorruptedSessionError, match="multi-agent does not exist"):
        RedisSessionRepository(redis_client).update_multi_agent(SID, _swarm())
    assert every_key(redis_client) == []


def _stored(payload: Callable[[dict[str, Any]], Any]) -> Callable[[redis.Redis], None]:
    """Store a record whose orchestrator state is ``payload(a real one)``."""

    def corrupt(client: redis.Redis) -> None:
        record = {"state": payload(_swarm().serialize_state()), "signoff": {"state": {}, "messages": []}}
        client.hset(KEY, mapping={"version": "1", "record": json.dumps(record)})

    return corrupt


def _with(**changes: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda state: {**state, **changes}


@pytest.mark.parametrize(
    ("corrupt", "expected"),
    [
        (lambda c: c.hset(KEY, mapping={"version": "1", "record": "{not json"}), "not valid JSON"),
        (lambda c: c.hset(KEY, mapping={"version": "x", "record": "{}"}), "version"),
        (lambda c: c.hset(KEY, mapping={"version": "1"}), "record missing"),
        (lambda c: c.set(KEY, "a string"), "key holds something else"),
        (_stored(lambda state: [state]), r"field=<state> \| not a JSON object"),
        (_stored(_with(id="other_swarm")), "stored under another id"),
        (_stored(_with(status="sleeping")), "not a Strands multi-agent state"),
        (_stored(_with(node_results={"solo": {"result": {"type": "robot"}}})), "not a Strands multi-agent state"),
        (_stored(_with(next_nodes_to_execute="solo")), "next_nodes_to_execute"),
        (
            _stored(_with(_internal_state={"interrupt_state": {"interrupts": [], "context": {}, "activated": 1}})),
            r"state\._internal_state\.interrupt_state",
        ),
    ],
)
def test_corrupted_data_gives_a_clear_error_and_stays(
    redis_client: redis.Redis, corrupt: Callable[[redis.Redis], Any], expected: str
) -> None:
    corrupt(redis_client)
    before = redis_client.dump(KEY)

    with pytest.raises(CorruptedSessionError, match=expected) as raised:
        RedisSessionRepository(redis_client).read_multi_agent(SID, "default_swarm")

    assert isinstance(raised.value, SessionException)  # ours
    assert isinstance(raised.value, StrandsSessionException)  # and Strands'
    assert f"session_id=<{SID}>" in str(raised.value)
    assert redis_client.dump(KEY) == before


def test_the_bot_sees_an_interrupted_swarm_as_any_interrupted_session(redis_client: redis.Redis) -> None:
    """Persisted through ``signoff_session_manager``, the Swarm is mirrored into the session's own hash."""
    store = SessionStore(redis_client)
    swarm = swarm_tool_agent(session_id=SID, store=store)
    result = swarm("delete /tmp/a")
    assert result.status.value == "interrupted"

    stored = store.load(SID)
    assert stored is not None
    assert stored.interrupted
    assert stored.interrupt_state == swarm._interrupt_state.to_dict()
    assert store.interrupted_sessions() == [SID]
    assert _record(redis_client)["state"] == swarm.serialize_state()
    keys = {key.decode() if isinstance(key, bytes) else key for key in every_key(redis_client)}
    session_keys = {key for key in keys if not key.startswith("test:")}
    assert session_keys == {KEY, strands_key(SID, "session"), keys_for(SID).session, keys_for(SID).interrupted_index}
    assert len({key_slot(key.encode()) for key in session_keys}) == 1

    # A second worker's Swarm is restored from Redis, still waiting on the same interrupt.
    again = swarm_tool_agent(session_id=SID, store=store)
    assert again._interrupt_state.activated
    assert list(again._interrupt_state.interrupts) == [interrupt.id for interrupt in result.interrupts]
