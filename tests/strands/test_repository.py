"""``RedisSessionRepository``: Strands' session repository interface on Signoff's Redis."""

import json
from collections.abc import Callable
from typing import Any

import pytest
import redis
from redis.crc import key_slot
from strands.types.exceptions import SessionException as StrandsSessionException
from strands.types.session import Session, SessionAgent, SessionMessage, SessionType

from agent.strands_bridge import CorruptedSessionError, RecordConflictError, RedisSessionRepository, strands_key
from state import ConflictError, SessionException, SessionStore, keys_for
from tests.bot.support.processes import run_python
from tests.redis_targets import every_key, on_both
from tests.strands.agents import completions, strands_batch_agent

pytest_generate_tests = on_both

SID = "T0TEST:C0OPS:1700000000.000100"


def _agent(agent_id: str = "default", **state: Any) -> Any:
    return SessionAgent(agent_id=agent_id, state=dict(state), conversation_manager_state={"removed_message_count": 0})


def _message(message_id: int, text: str) -> Any:
    return SessionMessage.from_message({"role": "user", "content": [{"text": text}]}, message_id)


@pytest.fixture
def repository(redis_client: redis.Redis) -> RedisSessionRepository:
    return RedisSessionRepository(redis_client)


def test_session_agent_and_messages_round_trip(repository: RedisSessionRepository, redis_client: redis.Redis) -> None:
    assert repository.read_session(SID) is None
    session = Session(session_id=SID, session_type=SessionType.AGENT)
    repository.create_session(session)
    assert repository.read_session(SID) == session

    assert repository.read_agent(SID, "default") is None
    agent = _agent(prompt_ids=["p1"])
    repository.create_agent(SID, agent)
    assert repository.read_agent(SID, "default") == agent

    for index in range(5):
        repository.create_message(SID, "default", _message(index, f"m{index}"))
    assert [m.message["content"][0]["text"] for m in repository.list_messages(SID, "default")] == [
        "m0",
        "m1",
        "m2",
        "m3",
        "m4",
    ]
    assert [m.message_id for m in repository.list_messages(SID, "default", limit=2, offset=1)] == [1, 2]
    assert repository.read_message(SID, "default", 3).message["content"][0]["text"] == "m3"
    assert repository.read_message(SID, "default", 9) is None

    # Updates keep the creation time, as Strands' own repositories do.
    created_at = agent.created_at
    repository.update_agent(SID, _agent(prompt_ids=["p1", "p2"]))
    stored_agent = repository.read_agent(SID, "default")
    assert stored_agent.state == {"prompt_ids": ["p1", "p2"]}
    assert stored_agent.created_at == created_at
    redacted = repository.read_message(SID, "default", 4)
    redacted.redact_message = {"role": "user", "content": [{"text": "[redacted]"}]}
    repository.update_message(SID, "default", redacted)
    assert repository.read_message(SID, "default", 4).to_message()["content"][0]["text"] == "[redacted]"

    # Every key of the session carries its shard's hash tag (one slot with our record), under the strands prefix.
    keys = sorted(key.decode() if isinstance(key, bytes) else key for key in every_key(redis_client))
    assert keys == [
        strands_key(SID, "agent", "default"),
        strands_key(SID, "message_versions", "default"),
        strands_key(SID, "messages", "default"),
        strands_key(SID, "session"),
    ]
    own_record = keys_for(SID).session
    assert all(key.startswith(own_record.removesuffix(":session") + ":strands:") for key in keys)
    assert {key_slot(key.encode()) for key in keys} == {key_slot(own_record.encode())}


def test_a_stale_writer_gets_a_conflict_never_an_overwrite(redis_client: redis.Redis) -> None:
    first, second = RedisSessionRepository(redis_client), RedisSessionRepository(redis_client)
    first.create_session(Session(session_id=SID, session_type=SessionType.AGENT))
    first.create_agent(SID, _agent())
    first.create_message(SID, "default", _message(0, "hello"))
    second.read_agent(SID, "default")
    second.list_messages(SID, "default")

    second.update_agent(SID, _agent(winner="second"))
    with pytest.raises(RecordConflictError) as raised:
        first.update_agent(SID, _agent(winner="first"))
    assert isinstance(raised.value, ConflictError)
    assert (raised.value.record, raised.value.expected_version, raised.value.actual_version) == ("agent:default", 1, 2)
    assert first.read_agent(SID, "default").state == {"winner": "second"}

    message = second.read_message(SID, "default", 0)
    message.redact_message = {"role": "user", "content": [{"text": "second"}]}
    second.update_message(SID, "default", message)
    message.redact_message = {"role": "user", "content": [{"text": "first"}]}
    with pytest.raises(RecordConflictError, match="message:default:0"):
        first.update_message(SID, "default", message)

    with pytest.raises(RecordConflictError):
        first.create_message(SID, "default", _message(0, "again"))
    with pytest.raises(RecordConflictError):
        second.create_session(Session(session_id=SID, session_type=SessionType.AGENT))
    with pytest.raises(RecordConflictError):
        second.create_agent(SID, _agent())


def test_an_update_sent_again_after_its_reply_was_lost_is_answered_as_written(redis_client: redis.Redis) -> None:
    sent, lost_reply, stale = (RedisSessionRepository(redis_client) for _ in range(3))
    sent.create_session(Session(session_id=SID, session_type=SessionType.AGENT))
    sent.create_agent(SID, _agent())
    lost_reply.read_agent(SID, "default")
    stale.read_agent(SID, "default")
    update = _agent(result="recorded")

    sent.update_agent(SID, update)  # landed; the writer that retries never saw the reply
    lost_reply.update_agent(SID, update)  # the same update again: its own result, not a conflict

    assert redis_client.hget(strands_key(SID, "agent", "default"), "version") == b"2"
    with pytest.raises(RecordConflictError):  # a different update based on version 1 is still stale
        stale.update_agent(SID, _agent(result="other"))
    assert sent.read_agent(SID, "default").state == {"result": "recorded"}


@pytest.mark.parametrize(
    ("key_kind", "corrupt", "expected"),
    [
        ("session", lambda c, k: c.set(k, "{not json"), "session.*not valid JSON"),
        ("session", lambda c, k: c.set(k, json.dumps({"session_id": SID, "session_type": "ROBOT"})), "ROBOT"),
        ("agent", lambda c, k: c.hset(k, mapping={"version": "1", "record": "[1, 2]"}), "not a JSON object"),
        ("agent", lambda c, k: c.hset(k, mapping={"version": "x", "record": "{}"}), "version"),
        ("agent", lambda c, k: c.set(k, "a string"), "key holds something else"),
        ("messages", lambda c, k: c.hset(k, "0", "\xff{"), "message:default:0.*not valid JSON"),
        (
            "messages",
            lambda c, k: c.hset(k, "0", json.dumps({"message": {"role": "robot", "content": []}, "message_id": 0})),
            r"message\.0\.role",
        ),
    ],
)
def test_corrupted_data_gives_a_clear_error_and_stays(
    repository: RedisSessionRepository, redis_client: redis.Redis, key_kind: str, corrupt: Any, expected: str
) -> None:
    key = strands_key(SID, key_kind) if key_kind == "session" else strands_key(SID, key_kind, "default")
    corrupt(redis_client, key)
    before = redis_client.dump(key)

    read: Callable[[], Any] = {
        "session": lambda: repository.read_session(SID),
        "agent": lambda: repository.read_agent(SID, "default"),
        "messages": lambda: repository.list_messages(SID, "default"),
    }[key_kind]

    with pytest.raises(CorruptedSessionError, match=expected) as raised:
        read()

    assert isinstance(raised.value, SessionException)  # ours
    assert isinstance(raised.value, StrandsSessionException)  # and Strands'
    assert f"session_id=<{SID}>" in str(raised.value)
    assert redis_client.dump(key) == before


def test_a_strands_agent_rebuilt_in_a_fresh_process_restores_and_resumes(
    redis_client: redis.Redis, redis_url: str
) -> None:
    store = SessionStore(redis_client)
    strands_agent = strands_batch_agent(session_id=SID, store=store)
    result = strands_agent("ship it")
    assert result.stop_reason == "interrupt"
    [interrupt] = result.interrupts
    assert completions(redis_client, "notify") == 1

    process = run_python(["-m", "tests.strands.resume_elsewhere", redis_url, SID, interrupt.id])
    assert process.returncode == 0, process.stderr
    report = json.loads(process.stdout.strip().splitlines()[-1])

    assert report == {
        "interrupted": True,
        "messages": 2,  # the prompt and the toolUse message
        "stop_reason": "end_turn",
        "reply": "deployed api | told #ops",
        "model_calls": 1,  # only the final answer: the batch was replayed, not asked again
        "interrupted_after": False,
    }
    assert completions(redis_client, "notify") == 1  # completed before the interrupt: not re-run
    assert completions(redis_client, "deploy") == 1
    stored = store.load(SID)
    assert stored is not None
    assert not stored.interrupted
    assert [message["role"] for message in stored.messages] == ["user", "assistant", "user", "assistant"]


def test_bytes_that_are_not_utf8_are_reported_as_corruption(redis_client: redis.Redis) -> None:
    repository = RedisSessionRepository(redis_client)
    redis_client.set(strands_key("s-bytes", "session"), b"\xff\xfe")
    with pytest.raises(CorruptedSessionError, match="not UTF-8"):
        repository.read_session("s-bytes")
