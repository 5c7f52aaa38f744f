"""The audit trail: what a whole approval leaves behind, export round trips, and trimming."""

import io
from datetime import UTC, datetime

import pytest
import redis

from bench.round_trips import commands_sent
from bot.render import action_ids as ids
from bot.store import keys
from bot.store.audit import TRIM_PAGE, Audit, ExportFormat, read_export
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, OUTSIDER, REQUESTER


def test_one_approval_leaves_request_refusal_decision_and_resume_in_order(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    approval_id = bot.approval_id()
    bot.click(ids.APPROVE_ACTION, approval_id, user=REQUESTER)  # self-approval: refused
    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.drain()

    entries = list(bot.services.stores.audit.entries())
    assert [entry.event for entry in entries] == ["request", "unauthorized", "decision", "resume"]
    request, refusal, decision, resume = entries
    assert (request.actor, request.details["tool"], request.details["approval_id"]) == (
        REQUESTER,
        "restart_service",
        approval_id,
    )
    assert (refusal.actor, refusal.details["refusal"]) == (REQUESTER, "self_approval")
    assert (decision.actor, decision.details["decision"], decision.details["source"]) == (APPROVER, "approve", "button")
    assert resume.session_id == request.session_id == decision.session_id
    assert OUTSIDER not in {entry.actor for entry in entries}


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_round_trips_every_field(redis_client: redis.Redis, fmt: ExportFormat) -> None:
    audit = Audit(redis_client)
    audit.record("decision", session_id="T:C:1.2", actor="U0A", decision="approve", reason='quotes " and, commas')
    audit.record("claim", session_id="T:C:1.2", actor="U0B", until="2026-11-30T10:00:00+00:00", note="ünïcode ✅")
    out = io.StringIO()

    assert audit.export(out, fmt=fmt) == 2

    assert read_export(out.getvalue(), fmt) == list(audit.entries())
    assert redis_client.get(keys.audit_exported(keys.shard_of("T:C:1.2"))) == list(audit.entries())[-1].id.encode()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_events_of_two_shards_written_in_the_same_millisecond_export_with_different_ids(
    redis_client: redis.Redis, fmt: ExportFormat
) -> None:
    # Each shard has its own stream, which numbers its events on its own: the same stream id in both.
    for shard in (0, 1):
        redis_client.xadd(keys.audit(shard), {"event": "decision", "actor": f"U0SHARD{shard}"}, id="1800000000000-0")
    out = io.StringIO()

    assert Audit(redis_client).export(out, fmt=fmt) == 2

    exported = read_export(out.getvalue(), fmt)
    assert len({entry.row()["id"] for entry in exported}) == 2
    assert {(entry.shard, entry.actor) for entry in exported} == {(0, "U0SHARD0"), (1, "U0SHARD1")}


def test_export_since_skips_older_events(redis_client: redis.Redis) -> None:
    now = [1_800_000_000.0]
    audit = Audit(redis_client, clock=lambda: now[0])
    redis_client.xadd(keys.audit(0), {"event": "older"}, id="1000-0")  # long ago, by id
    audit.record("old")
    out = io.StringIO()
    audit.export(out, since=datetime(2026, 1, 1, tzinfo=UTC))
    assert [entry.event for entry in read_export(out.getvalue(), "jsonl")] == ["old"]


NODE = 100
"""``stream-node-max-entries``, Redis' default, which the test servers keep: an approximate trim drops whole nodes."""


def _record(redis_client: redis.Redis, audit: Audit, indexes: range) -> None:
    """One event per index, each of its own session: spread over every shard, as sessions are."""
    writes = redis_client.pipeline(transaction=False)
    for index in indexes:
        audit.add(writes, "event", session_id=f"T0:C0:{index}.1", index=index)
    writes.execute()


def _by_shard(audit: Audit) -> dict[int, list[int]]:
    """Each shard's events (their indexes), oldest first."""
    found: dict[int, list[int]] = {shard: [] for shard in keys.shards()}
    for entry in audit.entries():
        found[entry.shard].append(entry.details["index"])
    return found


def test_trimming_keeps_each_shard_s_newest_share_at_least(redis_client: redis.Redis) -> None:
    audit = Audit(redis_client)
    _record(redis_client, audit, range(6000))
    written = _by_shard(audit)
    share = -(-3000 // len(keys.shards()))
    assert all(len(indexes) > share + NODE for indexes in written.values())  # every shard has something to drop

    removed = audit.trim(max_entries=3000, keep_unexported=False)

    kept = _by_shard(audit)
    assert removed == 6000 - sum(len(indexes) for indexes in kept.values())
    for shard, indexes in kept.items():
        assert share <= len(indexes) < share + NODE  # approximate: whole nodes go, never below the share
        assert indexes == written[shard][-len(indexes) :]  # the newest
    assert audit.trim(max_entries=3000, keep_unexported=False) == 0  # at the bound: nothing more goes


def test_trimming_never_drops_what_was_not_exported(redis_client: redis.Redis) -> None:
    audit = Audit(redis_client)
    _record(redis_client, audit, range(3000))
    assert audit.trim(max_entries=300, keep_unexported=True) == 0  # nothing exported yet: nothing goes
    audit.export(io.StringIO())  # 0..2999 exported
    _record(redis_client, audit, range(3000, 6000))

    removed = audit.trim(max_entries=300, keep_unexported=True)

    assert removed > 0  # exported events went...
    remaining = {index for indexes in _by_shard(audit).values() for index in indexes}
    assert set(range(3000, 6000)) <= remaining  # ...none of the others, although the bound is 300
    assert len(remaining) == 6000 - removed

    audit.export(io.StringIO())
    audit.trim(max_entries=300, keep_unexported=True)
    share = -(-300 // len(keys.shards()))
    kept = _by_shard(audit)
    assert all(share <= len(indexes) < share + NODE for indexes in kept.values())


@pytest.mark.single_redis  # MONITOR watches one server
@pytest.mark.parametrize("keep_unexported", [False, True])
def test_trimming_reads_at_most_a_page_of_each_shard(redis_client: redis.Redis, keep_unexported: bool) -> None:
    audit = Audit(redis_client)
    _record(redis_client, audit, range(9000))
    audit.export(io.StringIO())

    with commands_sent(redis_client) as commands:
        assert audit.trim(max_entries=6000, keep_unexported=keep_unexported) > 0  # a share of 2000: a page beyond

    reads = [command for command in commands if command.split()[0].upper() in {"XRANGE", "XREVRANGE", "XREAD"}]
    if not keep_unexported:
        assert reads == []  # the server trims by length: nothing of the streams comes to the worker
    else:
        assert len(reads) == len(keys.shards())
        assert all(int(command.split()[-1]) <= TRIM_PAGE for command in reads)  # ... COUNT n
