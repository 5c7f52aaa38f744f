"""The Lua scripts: all in ``bot.store.scripts``, writing other owners' records exactly as those owners do."""

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis

from bot.domain.records import ApprovalRequest, Decision
from bot.domain.status import Status
from bot.store import keys, scripts
from bot.store.approvals import approval_index
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.decide_call import RECENT_KEPT, Attempt, DecideResult
from bot.store.audit import Audit
from bot.store.queues.jobs import JobQueue, ResumeJob
from bot.store.queues.outbox import Outbox, update_approval
from tests.bot.support.approval_requests import SID, an_approval_request

ROOT = Path(__file__).resolve().parents[3]


def _request(index: int) -> ApprovalRequest:
    return an_approval_request(interrupt_id=f"v1:before_tool_call:tooluse_{index}:x")


def _decide(
    redis_client: redis.Redis,
    request: ApprovalRequest,
    *,
    approvals: ApprovalStore | None = None,
    decided_at: datetime | None = None,
    with_request: bool = False,
) -> DecideResult:
    """An approval without a person's checks (as the clock decides): the request's place is still checked.

    ``approvals``: the store to decide with (a store keeps connections of its own: many calls share one).
    """
    return (approvals or ApprovalStore(redis_client)).decide(
        Attempt(SID, request.approval_id, "approve", "U0APPROVER", "T0TEST", "C0OPS", None, with_request=with_request),
        decision=Decision(decision="approve", decided_by="U0APPROVER", decided_at=decided_at or datetime.now(UTC)),
        update=Outbox.script_entry(update_approval(SID, request.approval_id), due_ms=0),
        audit=Audit(redis_client).script_events(("vote", "decision")),
    )


def _approve_all(
    redis_client: redis.Redis, count: int, *, decided_at: Callable[[int], datetime] = lambda _index: datetime.now(UTC)
) -> None:
    approvals = ApprovalStore(redis_client)
    requests = [_request(index) for index in range(count)]
    approvals.open_round(session_id=SID, version=4, requests=requests)
    for index, request in enumerate(requests):
        decided = _decide(redis_client, request, approvals=approvals, decided_at=decided_at(index))
        assert decided.status is Status.DECIDED


def test_every_lua_script_of_the_bot_lives_in_the_scripts_package() -> None:
    holding_lua = {path.relative_to(ROOT) for path in (ROOT / "bot").rglob("*.py") if "redis.call(" in path.read_text()}
    lua_files = {path.relative_to(ROOT).parent for path in (ROOT / "bot").rglob("*.lua")}

    assert holding_lua == set()  # Lua lives in .lua files
    assert lua_files == {Path("bot/store/scripts"), Path("bot/store/scripts/owners")}


def test_a_decision_keeps_the_outbox_wake_list_as_short_as_the_outbox_does(redis_client: redis.Redis) -> None:
    _approve_all(redis_client, 70)

    assert redis_client.hlen(keys.outbox_entries(keys.shard_of(SID))) == 70
    assert (
        redis_client.llen(keys.outbox_wake(keys.shard_of(SID))) == 64
    )  # the outbox's own bound, not one token per decision


def test_recent_decisions_keep_the_newest_and_are_trimmed_in_batches(redis_client: redis.Redis) -> None:
    count = 3 * RECENT_KEPT
    _approve_all(
        redis_client, count, decided_at=lambda index: datetime(2026, 12, 1, tzinfo=UTC) + timedelta(seconds=index)
    )

    workspace = approval_index.workspace(_request(0).team_id).encode()
    members: list[bytes] = redis_client.zrange(keys.recent_by(keys.shard_of(SID)), 0, -1)  # type: ignore[assignment]
    recent = [member for member in members if member.startswith(workspace)]
    assert RECENT_KEPT <= len(recent) < 2 * RECENT_KEPT
    newest = [_request(index).approval_id for index in range(count)][-RECENT_KEPT:]
    decided = ApprovalStore(redis_client).decided_in_workspace(_request(0).team_id, limit=RECENT_KEPT)
    assert [approval.request.approval_id for approval in decided] == newest[::-1]
    assert not redis_client.exists(keys.recent_decisions(keys.shard_of(SID))), "no shard-wide list besides"


def test_the_resume_job_a_decision_queues_is_the_job_queue_s_own_record(redis_client: redis.Redis) -> None:
    queue = JobQueue(redis_client)
    queue.ensure_group()

    _approve_all(redis_client, 2)

    [job] = queue.read("tester", block_ms=10)
    assert job.problem() is None
    assert job.record() == ResumeJob(SID, 4)
    assert job.fields == ResumeJob(SID, 4).fields()


def _store_with_its_request_moved(redis_client: redis.Redis, request: ApprovalRequest) -> None:
    """Open ``request``, then make its stored request say it is in another channel (its terms still say C0OPS)."""
    ApprovalStore(redis_client).open_round(session_id=SID, version=4, requests=[request])
    elsewhere = request.model_copy(update={"channel_id": "C0ELSEWHERE"})
    redis_client.hset(keys.approval(SID, request.approval_id), "request", elsewhere.model_dump_json())


def test_a_decision_is_judged_by_the_request_s_terms_and_answered_without_the_request(
    redis_client: redis.Redis,
) -> None:
    request = _request(0).model_copy(update={"tool_input": {"content": "x" * 200_000}})
    _store_with_its_request_moved(redis_client, request)

    result = _decide(redis_client, request)

    assert result.status is Status.DECIDED  # the request was not read: it would have sent the click elsewhere
    assert result.request_json == ""  # nor sent back: a click has no use for a file's contents


def test_a_decision_carries_its_request_when_the_caller_asks(redis_client: redis.Redis) -> None:
    request = _request(0).model_copy(update={"tool_input": {"content": "x" * 200_000}})
    ApprovalStore(redis_client).open_round(session_id=SID, version=4, requests=[request])

    result = _decide(redis_client, request, with_request=True)

    assert result.status is Status.DECIDED
    assert result.request == request


def test_an_approval_stored_before_terms_were_kept_apart_is_judged_by_its_request(redis_client: redis.Redis) -> None:
    moved, kept = _request(0), _request(1)
    _store_with_its_request_moved(redis_client, moved)
    ApprovalStore(redis_client).open_round(session_id=SID, version=4, requests=[kept])
    for request in (moved, kept):
        redis_client.hdel(keys.approval(SID, request.approval_id), "terms")

    assert _decide(redis_client, moved).status is Status.NEEDS  # its request says another channel: asked where
    assert _decide(redis_client, kept).status is Status.DECIDED


def test_every_script_lists_each_lua_script_of_the_package() -> None:
    files = {path.stem for path in (ROOT / "bot" / "store" / "scripts").glob("*.lua")}

    assert {script.name for script in scripts.EVERY_SPEC} == files
    assert tuple(script.text for script in scripts.EVERY_SPEC) == scripts.EVERY_SCRIPT


_WRITES = {"HSET", "HDEL", "HINCRBY", "DEL", "SET", "ZADD", "ZREM", "SADD", "SREM", "LPUSH", "XADD"}
_OTHER_OWNERS_KEYS = {  # a script's KEYS that hold another owner's records: it writes them through that owner's Lua
    "edit_call": ("approval_key", "votes_key", "outbox_", "audit_key"),
    "claim_approval": ("due_key",),
    "decide": ("jobs_key", "outbox_", "audit_key", "schedule_"),
}


def test_a_script_writes_another_owner_s_records_only_through_that_owner_s_lua() -> None:
    for name, foreign in _OTHER_OWNERS_KEYS.items():
        body = (ROOT / "bot" / "store" / "scripts" / f"{name}.lua").read_text()
        writes = re.findall(r"redis\.call\('(\w+)', (\w+)", body)

        assert [key for command, key in writes if command in _WRITES and key.startswith(foreign)] == [], name


def test_a_post_completes_without_its_optional_caller_and_open_by_keys(redis_client: redis.Redis) -> None:
    redis_client.zadd("{t}due", {"e1": 1})
    redis_client.hset("{t}entries", "e1", "{}")
    redis_client.hset("{t}claims", "e1", "1")
    complete = redis_client.register_script(scripts.COMPLETE_POST.text)

    kept = complete(
        keys=scripts.COMPLETE_POST.key_list(
            posted_key="{t}posted", due_key="{t}due", entries_key="{t}entries", claims_key="{t}claims"
        ),
        args=scripts.COMPLETE_POST.arg_list(entry_id="e1", copy="C1:1.0", ttl_s=60, open_by_prefix="", approval_id="a"),
    )

    assert kept == b"C1:1.0"
    assert redis_client.get("{t}posted") == b"C1:1.0"
    assert not redis_client.exists("{t}due", "{t}entries", "{t}claims")
