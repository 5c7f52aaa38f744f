"""Behaviour of ``state.store`` against a real Redis server: versions, TTLs, the interrupted index, corruption."""

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from redis.crc import key_slot

from state import ConflictError, RedisServer, Session, SessionException, SessionStore, keys_for
from state.interrupt import Interrupt, PendingToolExecution, _InterruptState
from state.shapes import Message
from state.store import interrupted_index, shard_count, shard_of, shard_tag
from tests.redis_targets import every_key, on_both
from tests.seconds_clock import SecondsClock

pytest_generate_tests = on_both
SESSION_FIELDS = {"version", "messages", "agent_state", "interrupt_state", "format", "updated_at_ms"}


@pytest.fixture
def store(redis_client: redis.Redis, clock: SecondsClock) -> SessionStore:
    return SessionStore(redis_client, clock=clock)


def user(text: str) -> Message:
    return {"role": "user", "content": [{"text": text}]}


def idle_state() -> dict[str, Any]:
    return _InterruptState().to_dict()


def interrupted_state() -> dict[str, Any]:
    interrupt_id = "v1:tool_call:tooluse-1:delete_file"
    state = _InterruptState(
        interrupts={interrupt_id: Interrupt(id=interrupt_id, name="delete_file", reason={"path": "/tmp/x"})},
        activated=True,
        pending_tool_execution=PendingToolExecution(
            assistant_message={
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "tooluse-1", "name": "delete_file", "input": {}}}],
            },
            completed_tool_results=[],
        ),
    )
    return state.to_dict()


def save(
    store: SessionStore,
    session_id: str,
    *,
    expected_version: int = 0,
    interrupted: bool = False,
    messages: list[Message] | None = None,
    agent_state: dict[str, Any] | None = None,
    ttl_seconds: float | None = None,
) -> int:
    return store.save(
        session_id,
        expected_version=expected_version,
        messages=[user("hi")] if messages is None else messages,
        agent_state={} if agent_state is None else agent_state,
        interrupt_state=interrupted_state() if interrupted else idle_state(),
        ttl_seconds=ttl_seconds,
    )


def text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def index(redis_client: redis.Redis) -> list[tuple[str, float]]:
    """Every shard's interrupted index, oldest first."""
    entries: list[tuple[str, float]] = []
    for shard in range(shard_count()):
        raw: list[tuple[bytes, float]] = redis_client.zrange(interrupted_index(shard), 0, -1, withscores=True)  # type: ignore[assignment]
        entries.extend((text(member), score) for member, score in raw)
    return sorted(entries, key=lambda entry: (entry[1], entry[0]))


def indexed_at(redis_client: redis.Redis, session_id: str) -> float | None:
    """When ``session_id`` entered its shard's interrupted index (``None``: not in it)."""
    return redis_client.zscore(keys_for(session_id).interrupted_index, session_id)


def interrupt_in_turn(store: SessionStore, clock: SecondsClock, session_ids: list[str], *, apart_s: float) -> None:
    """Save each session interrupted, ``apart_s`` seconds after the one before it."""
    for turn, session_id in enumerate(session_ids):
        if turn:
            clock.now += apart_s
        save(store, session_id, interrupted=True)


def snapshot(redis_client: redis.Redis) -> dict[str, tuple[str, Any, int]]:
    """Every key of the database with its type, contents and TTL: proof that nothing changed."""
    contents: dict[str, Callable[[str], Any]] = {
        "hash": redis_client.hgetall,
        "string": redis_client.get,
        "list": lambda key: redis_client.lrange(key, 0, -1),
        "zset": lambda key: redis_client.zrange(key, 0, -1, withscores=True),
    }
    result = {}
    for raw_key in every_key(redis_client):
        key, kind = text(raw_key), text(redis_client.type(raw_key))
        result[key] = (kind, contents[kind](key), redis_client.pttl(key))
    return result


# --- round trip and versions --------------------------------------------------------------------


def test_load_of_an_unknown_session_is_none(store: SessionStore) -> None:
    assert store.load("nobody") is None


def test_save_and_load_round_trip_unicode_and_falsy_values(store: SessionStore, clock: SecondsClock) -> None:
    messages: list[Message] = [
        user('héllo wörld 🌍 日本語 \u2028 \x00 "quoted" \\ back'),
        {"role": "assistant", "content": [{"text": ""}], "metadata": {"latency": 0, "cached": False}},
    ]
    agent_state = {"zero": 0, "false": False, "empty": "", "none": None, "list": [], "dict": {}, "float": 0.5}
    state = _InterruptState.from_dict(interrupted_state())
    state.resume([{"interruptResponse": {"interruptId": "v1:tool_call:tooluse-1:delete_file", "response": False}}])
    interrupt_state = state.to_dict()

    version = store.save(
        "s-1", expected_version=0, messages=messages, agent_state=agent_state, interrupt_state=interrupt_state
    )
    loaded = store.load("s-1")

    assert version == 1
    assert loaded == Session(
        session_id="s-1",
        version=1,
        messages=messages,
        agent_state=agent_state,
        interrupt_state=interrupt_state,
        updated_at_ms=1_700_000_000_000,
    )
    assert loaded.interrupted is True
    assert _InterruptState.from_dict(loaded.interrupt_state) == state


def test_version_starts_at_one_and_increments(store: SessionStore, clock: SecondsClock) -> None:
    versions = []
    for step in range(4):
        clock.now += 1
        versions.append(save(store, "s-1", expected_version=step, messages=[user(f"turn {step}")]))

    loaded = store.load("s-1")
    assert versions == [1, 2, 3, 4]
    assert loaded is not None
    assert loaded.version == 4
    assert loaded.messages == [user("turn 3")]
    assert loaded.updated_at_ms == int(clock.now * 1000)


def test_version_is_read_without_the_session(store: SessionStore, redis_client: redis.Redis) -> None:
    assert store.version("s-1") == 0
    save(store, "s-1", messages=[user("first")])
    save(store, "s-1", expected_version=1, messages=[user("second")])
    assert store.version("s-1") == 2

    redis_client.hset(keys_for("numberless").session, "version", "three")
    with pytest.raises(SessionException, match=r"session_id=<numberless>, field=<version>"):
        store.version("numberless")
    redis_client.set(keys_for("a-string").session, "x")
    with pytest.raises(SessionException, match=r"session_id=<a-string> \| key holds something else"):
        store.version("a-string")


def test_create_when_the_session_exists_is_a_conflict(store: SessionStore) -> None:
    save(store, "s-1", messages=[user("first")])

    with pytest.raises(ConflictError) as caught:
        save(store, "s-1", expected_version=0, messages=[user("second")])

    assert (caught.value.session_id, caught.value.expected_version, caught.value.actual_version) == ("s-1", 0, 1)
    loaded = store.load("s-1")
    assert loaded is not None
    assert loaded.messages == [user("first")]


def test_update_of_a_missing_session_is_a_conflict_and_creates_nothing(
    store: SessionStore, redis_client: redis.Redis
) -> None:
    with pytest.raises(ConflictError) as caught:
        save(store, "s-1", expected_version=3, interrupted=True)

    assert (caught.value.expected_version, caught.value.actual_version) == (3, 0)
    assert every_key(redis_client) == []


@pytest.mark.parametrize("stale_version", [1, 3], ids=["behind", "ahead"])
def test_stale_writer_gets_a_conflict_and_changes_nothing(
    store: SessionStore, redis_client: redis.Redis, clock: SecondsClock, stale_version: int
) -> None:
    save(store, "s-1")
    save(store, "s-1", expected_version=1, messages=[user("winner")], agent_state={"by": "winner"})
    before = snapshot(redis_client)

    clock.now += 60
    with pytest.raises(ConflictError) as caught:
        save(store, "s-1", expected_version=stale_version, interrupted=True, messages=[user("loser")], ttl_seconds=5)

    assert (caught.value.expected_version, caught.value.actual_version) == (stale_version, 2)
    assert str(caught.value) == (
        f"session_id=<s-1>, expected_version=<{stale_version}>, actual_version=<2> | session changed since it was read"
    )
    assert snapshot(redis_client) == before
    assert store.interrupted_sessions() == []


def test_a_write_sent_again_after_its_reply_was_lost_is_answered_as_written(
    store: SessionStore, redis_client: redis.Redis
) -> None:
    save(store, "s-1")
    assert save(store, "s-1", expected_version=1, messages=[user("result")], agent_state={"n": 1}) == 2
    before = snapshot(redis_client)

    # The same write again (a retry after a connection error): its own result, not a conflict.
    assert save(store, "s-1", expected_version=1, messages=[user("result")], agent_state={"n": 1}) == 2

    assert snapshot(redis_client) == before
    with pytest.raises(ConflictError):  # any other write based on version 1 is still stale
        save(store, "s-1", expected_version=1, messages=[user("result")], agent_state={"n": 2})


def test_racing_read_modify_write_loses_no_update(store: SessionStore) -> None:
    threads, writes_per_thread = 8, 25
    successes: list[int] = []
    conflicts: list[ConflictError] = []
    failures: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def writer(number: int) -> None:
        try:
            start.wait()
            for item in range(writes_per_thread):
                while True:
                    session = store.load("shared")
                    messages = [] if session is None else session.messages
                    try:
                        version = store.save(
                            "shared",
                            expected_version=0 if session is None else session.version,
                            messages=[*messages, user(f"{number}-{item}")],
                            agent_state={"last": f"{number}-{item}"},
                            interrupt_state=idle_state(),
                        )
                    except ConflictError as conflict:
                        with lock:
                            conflicts.append(conflict)
                        continue
                    with lock:
                        successes.append(version)
                    break
        except BaseException as error:  # reported below; a dead thread must fail the test
            failures.append(error)

    workers = [threading.Thread(target=writer, args=(number,)) for number in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)

    assert failures == []
    final = store.load("shared")
    assert final is not None
    texts = [message["content"][0].get("text") for message in final.messages]
    expected = {f"{number}-{item}" for number in range(threads) for item in range(writes_per_thread)}
    assert len(texts) == threads * writes_per_thread
    assert set(texts) == expected
    # Every successful write produced a distinct version, and the last one is the final version.
    assert sorted(successes) == list(range(1, threads * writes_per_thread + 1))
    assert final.version == len(successes)
    # A conflict always reports a version other than the one the loser read.
    assert all(conflict.actual_version != conflict.expected_version for conflict in conflicts)
    print(f"{len(conflicts)} conflicts for {len(successes)} writes")


# --- TTL ----------------------------------------------------------------------------------------


def test_save_with_ttl_sets_an_expiry(store: SessionStore, redis_client: redis.Redis) -> None:
    save(store, "s-1", ttl_seconds=60)

    assert 0 < redis_client.pttl(keys_for("s-1").session) <= 60_000


def test_store_default_ttl_applies_and_an_explicit_ttl_overrides_it(
    redis_client: redis.Redis, clock: SecondsClock
) -> None:
    store = SessionStore(redis_client, ttl_seconds=30, clock=clock)
    key = keys_for("s-1").session

    save(store, "s-1")
    assert 0 < redis_client.pttl(key) <= 30_000

    save(store, "s-1", expected_version=1, ttl_seconds=3600)
    assert 30_000 < redis_client.pttl(key) <= 3_600_000


def test_later_save_without_ttl_clears_the_expiry(store: SessionStore, redis_client: redis.Redis) -> None:
    save(store, "s-1", ttl_seconds=60)

    save(store, "s-1", expected_version=1)

    assert redis_client.pttl(keys_for("s-1").session) == -1


@pytest.mark.parametrize("ttl_seconds", [0.0005, 0.5, 86_400.0], ids=repr)
def test_any_positive_ttl_makes_the_session_expire(
    store: SessionStore, redis_client: redis.Redis, ttl_seconds: float
) -> None:
    save(store, "s-1", ttl_seconds=ttl_seconds)

    # -1 means "no expiry"; -2 (already expired) is fine for sub-millisecond TTLs.
    assert redis_client.pttl(keys_for("s-1").session) != -1


def _expire(redis_client: redis.Redis, session_id: str) -> None:
    # An interrupted session never gets a TTL from the store: expire it the way an operator (or an
    # older release) could, and wait until Redis has dropped it.
    redis_client.pexpire(keys_for(session_id).session, 1)
    deadline = time.monotonic() + 5
    while redis_client.exists(keys_for(session_id).session) and time.monotonic() < deadline:
        time.sleep(0.01)


def _delete_behind_the_stores_back(redis_client: redis.Redis, session_id: str) -> None:
    redis_client.delete(keys_for(session_id).session)


@pytest.mark.parametrize("vanish", [_expire, _delete_behind_the_stores_back], ids=["expired", "deleted"])
def test_vanished_session_leaves_the_index_and_is_pruned(
    store: SessionStore, redis_client: redis.Redis, clock: SecondsClock, vanish: Callable[[redis.Redis, str], None]
) -> None:
    interrupt_in_turn(store, clock, ["gone", "stays"], apart_s=1)
    assert store.interrupted_sessions() == ["gone", "stays"]

    vanish(redis_client, "gone")

    assert store.load("gone") is None
    assert store.interrupted_sessions() == ["stays"]
    assert indexed_at(redis_client, "gone") is None
    assert [member for member, _ in index(redis_client)] == ["stays"]


# --- the interrupted index ----------------------------------------------------------------------


def test_interrupted_index_lists_activated_sessions_oldest_first(
    store: SessionStore, redis_client: redis.Redis, clock: SecondsClock
) -> None:
    clock.now += 10
    interrupt_in_turn(store, clock, ["zeta", "alpha", "mid"], apart_s=10)  # not alphabetical: order is by time
    clock.now += 10
    save(store, "idle", interrupted=False)

    assert store.interrupted_sessions() == ["zeta", "alpha", "mid"]
    assert index(redis_client) == [
        ("zeta", 1_700_000_010_000),
        ("alpha", 1_700_000_020_000),
        ("mid", 1_700_000_030_000),
    ]


def test_staying_interrupted_keeps_the_original_entry_time(
    store: SessionStore, redis_client: redis.Redis, clock: SecondsClock
) -> None:
    interrupt_in_turn(store, clock, ["first", "second"], apart_s=10)
    clock.now += 10

    save(store, "first", expected_version=1, interrupted=True, messages=[user("still waiting")])

    assert store.interrupted_sessions() == ["first", "second"]
    assert indexed_at(redis_client, "first") == 1_700_000_000_000


def test_saved_deactivated_or_deleted_sessions_leave_the_index(
    store: SessionStore, redis_client: redis.Redis, clock: SecondsClock
) -> None:
    clock.now += 1
    interrupt_in_turn(store, clock, ["a", "b", "c"], apart_s=1)

    save(store, "a", expected_version=1, interrupted=False)
    store.delete("b", expected_version=1)

    assert store.interrupted_sessions() == ["c"]
    assert [member for member, _ in index(redis_client)] == ["c"]
    assert store.load("b") is None
    assert not redis_client.exists(keys_for("b").session)


def test_re_entering_the_interrupted_state_moves_to_the_end(
    store: SessionStore, redis_client: redis.Redis, clock: SecondsClock
) -> None:
    interrupt_in_turn(store, clock, ["a", "b"], apart_s=1)
    clock.now += 1
    save(store, "a", expected_version=1, interrupted=False)
    clock.now += 1
    save(store, "a", expected_version=2, interrupted=True)

    assert store.interrupted_sessions() == ["b", "a"]
    assert indexed_at(redis_client, "a") == 1_700_000_003_000


def test_session_recreated_after_expiry_is_scored_by_its_new_entry_time(
    store: SessionStore, redis_client: redis.Redis, clock: SecondsClock
) -> None:
    interrupt_in_turn(store, clock, ["a", "b"], apart_s=10)
    _expire(redis_client, "a")

    clock.now += 10
    save(store, "a", expected_version=0, interrupted=True)  # a new session under the old id

    assert store.interrupted_sessions() == ["b", "a"]
    assert indexed_at(redis_client, "a") == 1_700_000_020_000


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 10])
def test_interrupted_sessions_returns_at_most_limit(store: SessionStore, clock: SecondsClock, limit: int) -> None:
    clock.now += 1
    interrupt_in_turn(store, clock, ["a", "b", "c"], apart_s=1)

    assert store.interrupted_sessions(limit=limit) == ["a", "b", "c"][:limit]


def test_interrupted_sessions_of_an_empty_store(store: SessionStore) -> None:
    assert store.interrupted_sessions() == []


# --- delete -------------------------------------------------------------------------------------


def test_delete_with_a_stale_version_is_a_conflict(store: SessionStore, redis_client: redis.Redis) -> None:
    save(store, "s-1", interrupted=True)
    save(store, "s-1", expected_version=1, interrupted=True)
    before = snapshot(redis_client)

    with pytest.raises(ConflictError) as caught:
        store.delete("s-1", expected_version=1)

    assert (caught.value.expected_version, caught.value.actual_version) == (1, 2)
    assert snapshot(redis_client) == before
    assert store.interrupted_sessions() == ["s-1"]


def test_delete_of_a_missing_session_with_a_version_is_a_conflict(store: SessionStore) -> None:
    with pytest.raises(ConflictError) as caught:
        store.delete("nobody", expected_version=1)

    assert caught.value.actual_version == 0


# --- corrupted or foreign data ------------------------------------------------------------------


def _valid_fields() -> dict[str, str]:
    return {
        "version": "3",
        "messages": json.dumps([user("hi")]),
        "agent_state": "{}",
        "interrupt_state": json.dumps(interrupted_state()),
        "format": "1",
        "updated_at_ms": "1700000000000",
    }


def _hash(**changes: str | None) -> Callable[[redis.Redis, str], None]:
    def write(redis_client: redis.Redis, key: str) -> None:
        for name, value in {**_valid_fields(), **changes}.items():
            if value is not None:
                redis_client.hset(key, name, value)

    return write


def _string(redis_client: redis.Redis, key: str) -> None:
    redis_client.set(key, "not a hash")


def _list(redis_client: redis.Redis, key: str) -> None:
    redis_client.rpush(key, "a", "b")


CORRUPTED: dict[str, tuple[Callable[[redis.Redis, str], None], str | None]] = {
    "messages-not-json": (_hash(messages="[{not json"), "messages"),
    "messages-missing": (_hash(messages=None), "messages"),
    "messages-bad-role": (_hash(messages=json.dumps([{"role": "system", "content": []}])), "messages.0.role"),
    "agent-state-a-list": (_hash(agent_state="[]"), "agent_state"),
    "wrong-format": (_hash(format="2"), "format"),
    "no-format": (_hash(format=None), "format"),
    "version-not-numeric": (_hash(version="three"), "version"),
    "version-missing": (_hash(version=None), "version"),
    "interrupt-state-not-json": (_hash(interrupt_state="{"), "interrupt_state"),
    "interrupt-state-activated-string": (
        _hash(interrupt_state=json.dumps({**interrupted_state(), "activated": "true"})),
        "interrupt_state.activated",
    ),
    "interrupt-state-pending-role": (
        _hash(
            interrupt_state=json.dumps(
                {
                    **interrupted_state(),
                    "pending_tool_execution": {
                        "assistant_message": {"role": "tool", "content": []},
                        "completed_tool_results": [],
                    },
                }
            )
        ),
        "interrupt_state.pending_tool_execution.assistant_message.role",
    ),
    "string-key": (_string, None),
    "list-key": (_list, None),
}


@pytest.mark.parametrize(("corrupt", "field"), CORRUPTED.values(), ids=CORRUPTED.keys())
def test_load_of_corrupted_data_names_session_and_field_and_deletes_nothing(
    store: SessionStore,
    redis_client: redis.Redis,
    corrupt: Callable[[redis.Redis, str], None],
    field: str | None,
) -> None:
    corrupt(redis_client, keys_for("broken").session)
    before = snapshot(redis_client)

    with pytest.raises(SessionException) as caught:
        store.load("broken")

    assert "session_id=<broken>" in str(caught.value)
    if field is not None:
        assert f"field=<{field}>" in str(caught.value)
    assert snapshot(redis_client) == before


def _foreign_hash(redis_client: redis.Redis, key: str) -> None:
    redis_client.hset(key, "owner", "someone else")


SAVE_OVER: dict[str, Callable[[redis.Redis, str], None]] = {
    "version-not-numeric": _hash(version="three"),
    "version-empty": _hash(version=""),
    "version-missing": _hash(version=None),
    "foreign-hash": _foreign_hash,
    "foreign-hash-with-version": _hash(format="0"),
    "string-key": _string,
}


@pytest.mark.parametrize("corrupt", SAVE_OVER.values(), ids=SAVE_OVER.keys())
@pytest.mark.parametrize("expected_version", [0, 3])
def test_save_over_corrupted_data_refuses_and_overwrites_nothing(
    store: SessionStore, redis_client: redis.Redis, corrupt: Callable[[redis.Redis, str], None], expected_version: int
) -> None:
    corrupt(redis_client, keys_for("broken").session)
    before = snapshot(redis_client)

    with pytest.raises(SessionException, match="session_id=<broken>"):
        save(store, "broken", expected_version=expected_version, interrupted=True, ttl_seconds=60)

    assert snapshot(redis_client) == before
    assert index(redis_client) == []


@pytest.mark.parametrize("corrupt", SAVE_OVER.values(), ids=SAVE_OVER.keys())
def test_delete_of_corrupted_data_refuses_and_deletes_nothing(
    store: SessionStore, redis_client: redis.Redis, corrupt: Callable[[redis.Redis, str], None]
) -> None:
    corrupt(redis_client, keys_for("broken").session)
    before = snapshot(redis_client)

    with pytest.raises(SessionException, match="session_id=<broken>"):
        store.delete("broken", expected_version=0)

    assert snapshot(redis_client) == before


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("agent_state", {"agent_state": {"handle": object()}}),
        ("agent_state", {"agent_state": {"tags": {"a", "b"}}}),
        ("agent_state", {"agent_state": {"ratio": float("nan")}}),
        ("messages", {"messages": [{"role": "user", "content": [{"text": b"bytes"}]}]}),
    ],
    ids=["object", "set", "nan", "bytes"],
)
def test_unserializable_values_raise_type_error_and_write_nothing(
    store: SessionStore, redis_client: redis.Redis, field: str, kwargs: dict[str, Any]
) -> None:
    save(store, "s-1", interrupted=False, agent_state={"kept": True})
    before = snapshot(redis_client)

    with pytest.raises(TypeError, match=f"field=<{field}>"):
        store.save(
            "s-1",
            expected_version=1,
            **{"messages": [user("hi")], "agent_state": {}, "interrupt_state": interrupted_state(), **kwargs},
        )
    with pytest.raises(TypeError, match="session_id=<new>"):
        store.save(
            "new",
            expected_version=0,
            **{"messages": [user("hi")], "agent_state": {}, "interrupt_state": interrupted_state(), **kwargs},
        )

    assert snapshot(redis_client) == before


def test_lone_surrogate_is_stored_or_refused_with_type_error(store: SessionStore, redis_client: redis.Redis) -> None:
    # json.loads('"\\ud800"') produces such a string; it is valid JSON, so it must either survive a
    # round trip or be refused as documented (TypeError, nothing written).
    agent_state = {"note": json.loads('"\\ud800"')}

    try:
        save(store, "s-1", agent_state=agent_state)
    except TypeError:
        assert every_key(redis_client) == []
    else:
        loaded = store.load("s-1")
        assert loaded is not None
        assert loaded.agent_state == agent_state


# --- decoded responses --------------------------------------------------------------------------


@pytest.fixture
def decoding_client(redis_server: RedisServer, redis_client: redis.Redis) -> Iterator[redis.Redis]:
    """A client that returns str instead of bytes, on the database ``redis_client`` just emptied."""
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    yield client
    client.close()


def test_store_works_with_a_decoding_client(decoding_client: redis.Redis, clock: SecondsClock) -> None:
    store = SessionStore(decoding_client, clock=clock)
    save(store, "a", interrupted=True, messages=[user("ünïcode")])
    clock.now += 1
    save(store, "b", interrupted=True)
    _expire(decoding_client, "a")
    decoding_client.hset(keys_for("c").session, mapping={"version": "x"})

    loaded = store.load("b")
    assert loaded is not None
    assert loaded.version == 1
    assert store.interrupted_sessions() == ["b"]
    with pytest.raises(SessionException):
        save(store, "c", expected_version=0)


# --- keys ---------------------------------------------------------------------------------------


def test_key_layout(store: SessionStore, redis_client: redis.Redis, clock: SecondsClock) -> None:
    session_id = "T123:C456:1700000000.000100"
    keys = keys_for(session_id)
    tag = shard_tag(shard_of(session_id))
    assert keys.session == f"signoff:{{{tag}}}:{{T123:C456:1700000000.000100}}:session"
    assert keys.interrupted_index == f"signoff:{{{tag}}}:interrupted"

    save(store, session_id, interrupted=True)

    assert set(every_key(redis_client)) == {keys.session.encode(), keys.interrupted_index.encode()}
    fields = {text(name): text(value) for name, value in redis_client.hgetall(keys.session).items()}
    assert set(fields) == SESSION_FIELDS
    assert fields["format"] == "1"
    assert fields["version"] == "1"
    assert fields["updated_at_ms"] == "1700000000000"
    assert json.loads(fields["messages"]) == [user("hi")]
    assert json.loads(fields["agent_state"]) == {}
    assert json.loads(fields["interrupt_state"]) == interrupted_state()


@pytest.mark.parametrize(
    "session_id", ["a", "slack:T1:C2:1700000000.000100", "ünïcode-日本", "x" * 512, "a:b/c?d=e&f#g"], ids=repr
)
def test_a_session_and_its_shard_index_share_one_slot(session_id: str) -> None:
    keys = keys_for(session_id)

    # Redis Cluster hashes only what is between the first { and the next }: the shard's tag.
    assert key_slot(keys.session.encode()) == key_slot(keys.interrupted_index.encode())
    assert keys.session.endswith(f":{{{session_id}}}:session")  # the id is still in the name, in braces


def test_each_shard_tag_lands_in_its_share_of_an_even_slot_split() -> None:
    """On a cluster whose masters split the slots evenly, each shard lives on its own master."""
    count = shard_count()
    slots = [key_slot(f"{{{shard_tag(shard)}}}".encode()) for shard in range(count)]

    assert [slot * count // 16384 for slot in slots] == list(range(count))
    assert len({shard_of(f"T1:C1:{n}.000100") for n in range(200)}) == count  # sessions use every shard


@pytest.mark.parametrize(
    "session_id",
    ["", "a{b", "a}b", "{a}", "a b", "a\tb", "a\nb", "a\x00b", "a\x7fb", "a\u2028b", "a\u00a0b", "x" * 513],
    ids=repr,
)
def test_bad_session_ids_are_refused_everywhere(
    store: SessionStore, redis_client: redis.Redis, session_id: str
) -> None:
    with pytest.raises(ValueError, match="session_id="):
        keys_for(session_id)
    with pytest.raises(ValueError, match="session_id="):
        store.load(session_id)
    with pytest.raises(ValueError, match="session_id="):
        save(store, session_id, interrupted=True)
    with pytest.raises(ValueError, match="session_id="):
        store.delete(session_id, expected_version=0)

    assert every_key(redis_client) == []


# --- refusing bad writes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "interrupt_state", "field"),
    [
        ([{"role": "robot", "content": []}], None, "messages.0.role"),
        ([user("hi")], {"interrupts": {}, "context": {}, "activated": "yes"}, "interrupt_state.activated"),
        ([{"role": "user", "content": [{"toolUse": {"name": "x"}}]}], None, "messages.0.content.0.toolUse.toolUseId"),
    ],
)
def test_save_refuses_what_load_would_refuse_and_writes_nothing(
    store: SessionStore,
    redis_client: redis.Redis,
    messages: list[Any],
    interrupt_state: dict[str, Any] | None,
    field: str,
) -> None:
    with pytest.raises(ValueError, match=rf"field=<{field}>"):
        store.save(
            "s-bad",
            expected_version=0,
            messages=messages,
            agent_state={},
            interrupt_state=interrupt_state or idle_state(),
        )
    assert redis_client.exists(keys_for("s-bad").session) == 0
    assert store.interrupted_sessions() == []


def test_an_interrupted_session_never_expires_and_gets_its_ttl_back_once_answered(
    redis_client: redis.Redis, clock: SecondsClock
) -> None:
    store = SessionStore(redis_client, ttl_seconds=60, clock=clock)
    key = keys_for("waiting").session
    save(store, "waiting", interrupted=True)
    assert redis_client.pttl(key) == -1  # humans may take their time
    save(store, "waiting", expected_version=1, interrupted=False)
    assert 0 < redis_client.pttl(key) <= 60_000


@pytest.mark.parametrize("ttl", [float("nan"), float("inf")])
def test_a_ttl_that_is_not_a_finite_number_is_refused(store: SessionStore, ttl: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        save(store, "s-ttl", ttl_seconds=ttl)


def test_a_version_of_zero_is_corruption_and_is_not_written_over(
    store: SessionStore, redis_client: redis.Redis
) -> None:
    redis_client.hset(keys_for("zero").session, mapping={"version": "0", "format": "1", "messages": "[]"})
    with pytest.raises(SessionException, match="corrupted"):
        save(store, "zero", expected_version=0)
    assert redis_client.hget(keys_for("zero").session, "messages") == b"[]"


def test_a_stored_value_that_is_not_utf8_is_a_session_exception(store: SessionStore, redis_client: redis.Redis) -> None:
    save(store, "bytes")
    redis_client.hset(keys_for("bytes").session, "messages", b"\xff\xfe")
    with pytest.raises(SessionException, match="not UTF-8"):
        store.load("bytes")


def test_negative_ttl_and_negative_limit_are_refused(store: SessionStore, redis_client: redis.Redis) -> None:
    with pytest.raises(ValueError, match="ttl_seconds=<-1>"):
        save(store, "s-ttl", ttl_seconds=-1)
    assert redis_client.exists(keys_for("s-ttl").session) == 0
    with pytest.raises(ValueError, match="limit=<-1>"):
        store.interrupted_sessions(limit=-1)
