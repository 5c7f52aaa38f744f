"""One malformed job on the stream never blinds the worker."""

import json
import time
from typing import Any

import pytest
import redis

from bot.render import action_ids as ids
from bot.store import keys
from tests.bot.support import shards
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER

BAD_JOBS = {
    "resume_without_session": {"kind": "resume"},
    "resume_bad_version": {"kind": "resume", "session_id": "T0TEST:C0OPS:1.0", "version": "x"},
    "start_without_fields": {"kind": "start"},
    "not_utf8": {"kind": b"\xff\xfe"},
}


def _drain_for(bot: Bot, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        bot.worker.run_jobs_once(block_ms=50)
        bot.worker.escalator.tick()
        bot.worker.deliverer.deliver_due()


@pytest.mark.parametrize("name", sorted(BAD_JOBS))
def test_one_malformed_job_does_not_stop_the_next_request(bot: Bot, redis_client: redis.Redis, name: str) -> None:
    redis_client.xadd(keys.jobs(0), BAD_JOBS[name])  # type: ignore[arg-type]
    bot.mention("restart checkout")
    _drain_for(bot, 3)
    assert bot.approval_messages(), bot.texts_posted()
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
    _drain_for(bot, 3)
    thread_ts = str(bot.approval_messages()[0]["thread_ts"])
    assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"


BAD_OUTBOX = {
    "garbage_json": b"{garbage",
    "not_utf8": b"\xff\xfe",
    "wrong_kind": b'{"kind": "launch_missiles", "payload": {}, "attempts": 0}',
    "payload_list": b'{"kind": "post_message", "payload": [], "attempts": 0}',
    "attempts_text": b'{"kind": "post_message", "payload": {"channel": "C0OPS", "text": "x"}, "attempts": "x"}',
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "post_without_channel": b'{"kind": "post_message", "payload": {"text": "hi"}, "attempts": 0}',
    "update_unknown_approval": (
        b'{"kind": "update_approval", "payload": {"session_id": "s", "approval_id": "a"}, "attempts": 0}'
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_OUTBOX))
def test_one_malformed_outbox_entry_does_not_stop_delivery(bot: Bot, redis_client: redis.Redis, name: str) -> None:
    entry_id = "00000000000000000001-bad"
    redis_client.hset(keys.outbox_entries(0), entry_id, BAD_OUTBOX[name])
    redis_client.zadd(keys.outbox_due(0), {entry_id: 0})
    bot.mention("restart checkout")
    _drain_for(bot, 3)
    assert bot.approval_messages(), bot.texts_posted()


def test_a_job_that_can_never_run_is_quarantined_once_not_retried(bot: Bot, redis_client: redis.Redis) -> None:
    """Nothing blinds: the job is acknowledged at once and the audit trail names it, for operators."""
    job_id: Any = redis_client.xadd(keys.jobs(0), BAD_JOBS["not_utf8"])  # type: ignore[arg-type]
    bot.worker.run_jobs_once(block_ms=50)
    assert bot.worker.jobs.pending_count() == 0
    assert shards.jobs_queued(redis_client) == 0
    quarantined = [entry for entry in bot.worker.audit.entries() if entry.event == "quarantined"]
    assert [(entry.details["record"], entry.details["key"]) for entry in quarantined] == [
        ("job", f"0/{job_id.decode()}")
    ]
    assert "not UTF-8" in quarantined[0].details["why"]


def test_an_unreadable_outbox_entry_is_moved_to_the_dead_letters(bot: Bot, redis_client: redis.Redis) -> None:
    """Nothing blinds: the entry leaves the queue at once, with why, where an operator finds it."""
    entry_id = "00000000000000000001-bad"
    redis_client.hset(keys.outbox_entries(0), entry_id, BAD_OUTBOX["not_utf8"])
    redis_client.zadd(keys.outbox_due(0), {entry_id: 0})
    bot.worker.deliverer.deliver_due()
    assert not redis_client.hexists(keys.outbox_entries(0), entry_id)
    assert redis_client.zscore(keys.outbox_due(0), entry_id) is None
    parked = json.loads(redis_client.hget(keys.outbox_dead(0), entry_id))  # type: ignore[arg-type]
    assert parked["unreadable"] == "\\xff\\xfe"
    assert "not JSON" in parked["why"]
