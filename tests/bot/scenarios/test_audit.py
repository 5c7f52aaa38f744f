"""The audit trail: what a whole approval leaves behind, export round trips, and trimming."""

import io
from datetime import UTC, datetime

import pytest
import redis

from bot.render import action_ids as ids
from bot.store import keys
from bot.store.audit import Audit, ExportFormat, read_export
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


def test_trimming_keeps_the_newest_entries(redis_client: redis.Redis) -> None:
    audit = Audit(redis_client)
    for index in range(30):
        audit.record("event", index=index)

    assert audit.trim(max_entries=10, keep_unexported=False) == 20
    assert [entry.details["index"] for entry in audit.entries()] == list(range(20, 30))


def test_trimming_never_drops_what_was_not_exported(redis_client: redis.Redis) -> None:
    audit = Audit(redis_client)
    for index in range(10):
        audit.record("event", index=index)
    audit.export(io.StringIO())  # 0..9 exported
    for index in range(10, 30):
        audit.record("event", index=index)

    removed = audit.trim(max_entries=5, keep_unexported=True)

    assert removed == 10  # only the exported ones went, although the bound is 5
    assert [entry.details["index"] for entry in audit.entries()] == list(range(10, 30))
    audit.export(io.StringIO())
    assert audit.trim(max_entries=5, keep_unexported=True) == 15
