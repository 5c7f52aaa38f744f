"""A person's grant listing: their own page, whatever others hold; an entry without its grant (a writer killed
between the listing and the grant's transaction, or a revoke half done) is skipped and removed."""

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis

from bot.domain.grants import Grant, call_digest
from bot.services import connect_redis
from bot.store import keys
from bot.store.access.grants import GrantStore
from bot.store.audit import Audit
from state import RedisServer
from tests.bot.support.crowd import other_grants
from tests.redis_targets import on_both

pytest_generate_tests = on_both

TEAM, LEAD = "T0TEST", "U0LEAD"


def _grant(grant_id: str, *, hours: int) -> Grant:
    now = datetime.now(UTC)
    return Grant(
        grant_id=grant_id, team_id=TEAM, channel_id="C0OPS", rule="restarts", tool="restart_service",
        tool_input={}, digest=call_digest("restart_service", {}, client=None), terms="t", requester="U0REQUESTER",
        granted_by=LEAD, granted_at=now, expires_at=now + timedelta(hours=hours), approval_id="a",
        granted_ms=int(now.timestamp() * 1000),
    )  # fmt: skip


def test_a_person_s_listing_holds_theirs_and_skips_what_lost_its_grant(redis_client: redis.Redis) -> None:
    store = GrantStore(redis_client)
    store.create(_grant("mine", hours=2))
    store.create(_grant("revoked-half-way", hours=1))
    redis_client.hdel(keys.grants(TEAM, "C0OPS"), "revoked-half-way")  # the record went, the listing did not follow
    other_grants(redis_client, 500, expires_at=datetime.now(UTC) + timedelta(minutes=5), team_id=TEAM)

    for person in (LEAD, "U0REQUESTER"):  # who made it, and the requester it covers
        assert [grant.grant_id for grant, *_ in store.live_of(TEAM, person, now_ms=0, limit=5)] == ["mine"]
    assert redis_client.zrange(keys.grants_of(TEAM, LEAD), 0, -1) == [b"C0OPS:mine"], "the stale entry is removed"

    store.revoke(TEAM, "C0OPS", "mine")
    assert store.live_of(TEAM, LEAD, now_ms=0) == []
    assert redis_client.zcard(keys.grants_of(TEAM, "U0REQUESTER")) == 0


def _unreplicated(own_redis: RedisServer) -> tuple[redis.Redis, GrantStore]:
    """A server without replicas and a store asking one to hold each revoke: every revoke stays owed."""
    client = connect_redis(own_redis.url, retry_s=0.0)
    return client, GrantStore(client, replicas=1)


def _revoked_audits(client: redis.Redis) -> list[tuple[str, str]]:
    return [(e.actor, e.details["grant"]) for e in Audit(client).entries() if e.event == "grant_revoked"]


def test_a_revoke_whose_first_step_reply_was_lost_and_sent_again_is_audited_once(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first step ran, its reply was lost and the pooled fallback sent it again: the run answered found the grant
    being revoked already (not ended by this call), yet the revoke is audited, as the person's, once."""
    store = GrantStore(redis_client)
    store.create(_grant("g1", hours=1))
    real = store._revoke.replicated

    def sent_twice(**call: Any) -> Any:
        real(**call)
        return real(**call)

    monkeypatch.setattr(store._revoke, "replicated", sent_twice)
    revoked = store.revoke(TEAM, "C0OPS", "g1", actor=LEAD)
    assert revoked is not None
    assert (revoked.ended_now, revoked.finished) == (False, True)
    assert _revoked_audits(redis_client) == [(LEAD, "g1")]


def test_a_revoke_that_failed_after_ending_the_grant_is_audited_once_however_often_tried(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = GrantStore(redis_client)
    store.create(_grant("g1", hours=1))
    real_unlist = store.unlist

    def unlist_fails(grant: Any) -> None:
        raise redis.ConnectionError("Connection reset by peer")

    monkeypatch.setattr(store, "unlist", unlist_fails)
    with pytest.raises(redis.ConnectionError):
        store.revoke(TEAM, "C0OPS", "g1", actor=LEAD)
    monkeypatch.setattr(store, "unlist", real_unlist)
    store.revoke(TEAM, "C0OPS", "g1", actor="operator:cli")  # tried again
    store.finish_owed(now_ms=int(time.time() * 1000) + 3_600_000)  # and by a worker
    assert store.held(TEAM, "C0OPS", "g1") is None
    assert redis_client.zcard(keys.GRANTS_REVOKING) == 0
    assert _revoked_audits(redis_client) == [(LEAD, "g1")]


def test_an_owed_revoke_a_worker_finishes_is_audited_as_the_person_s(own_redis: RedisServer) -> None:
    client, store = _unreplicated(own_redis)
    store.create(_grant("g1", hours=1))
    store.revoke(TEAM, "C0OPS", "g1", actor=LEAD)
    assert GrantStore(client).finish_owed(now_ms=int(time.time() * 1000) + 3_600_000) == 1
    assert _revoked_audits(client) == [(LEAD, "g1")]


def test_an_owed_revoke_of_a_grant_past_its_expiry_stays_listed_and_found_by_id(own_redis: RedisServer) -> None:
    """A call it was deciding (used before the expiry) may still be decided by it: operators and App Home keep it,
    and ``python -m bot grants revoke ID`` (``place_of``) finds it, until it is finished."""
    _client, store = _unreplicated(own_redis)
    grant = _grant("g1", hours=1)
    store.create(grant)
    revoked = store.revoke(TEAM, "C0OPS", "g1")
    assert revoked is not None
    assert not revoked.finished
    past = grant.expires_ms + 1
    assert [entry.grant.grant_id for entry in store.live(now_ms=past)] == ["g1"]
    assert [entry.grant.grant_id for entry in store.live_of(TEAM, LEAD, now_ms=past)] == ["g1"]
    assert store.place_of("g1") == (TEAM, "C0OPS")


def test_owed_revokes_that_cannot_finish_hold_a_worker_s_tick_briefly_and_take_turns(own_redis: RedisServer) -> None:
    """Each try waits for replicas that are not there: a tick tries a few (its budget), then the next tick tries
    others, so every one is tried in turn, and one tried just now waits its next try."""
    client, store = _unreplicated(own_redis)
    for index in range(21):
        store.create(_grant(f"g{index}", hours=1))
        store.revoke(TEAM, "C0OPS", f"g{index}")
    started = time.monotonic()
    assert store.finish_owed() == 0  # each was tried just now, by its revoke: none is due yet
    later = int(time.time() * 1000) + 60_000
    tried: set[Any] = set()
    for _tick in range(12):
        before = set(client.zrangebyscore(keys.GRANTS_REVOKING, "-inf", later))
        store.finish_owed(now_ms=later)
        tried |= before - set(client.zrangebyscore(keys.GRANTS_REVOKING, "-inf", later))
    took_s = time.monotonic() - started
    assert took_s < 12 * 0.8, f"12 ticks' finish_owed took {took_s:.1f} s"
    assert len(tried) == 21, "every owed revoke is tried in turn"


def test_a_revoke_killed_after_its_first_step_is_owed_to_the_workers(
    redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = GrantStore(redis_client)
    store.create(_grant("g1", hours=1))

    def killed(*_args: Any) -> bool:
        raise SystemExit("killed")

    monkeypatch.setattr(store, "_fence_uses", killed)
    with pytest.raises(SystemExit):
        store.revoke(TEAM, "C0OPS", "g1", actor=LEAD)
    monkeypatch.undo()
    assert GrantStore(redis_client).finish_owed(now_ms=int(time.time() * 1000) + 3_600_000) == 1
    assert store.held(TEAM, "C0OPS", "g1") is None
    assert _revoked_audits(redis_client) == [(LEAD, "g1")]


def test_an_owed_revoke_of_an_unreadable_grant_is_kept_until_finished_then_quarantined(own_redis: RedisServer) -> None:
    client, store = _unreplicated(own_redis)
    store.create(_grant("g1", hours=1))
    store.revoke(TEAM, "C0OPS", "g1")
    client.hset(keys.grants(TEAM, "C0OPS"), "g1:revoking", "{not a grant")
    later = int(time.time() * 1000) + 3_600_000
    store.finish_owed(now_ms=later)  # not finished (no replica holds it): still owed
    assert client.zrange(keys.GRANTS_REVOKING, 0, -1) == [f"{TEAM}:C0OPS:g1".encode()]
    GrantStore(client).finish_owed(now_ms=later + 60_000)  # finished: quarantined, tried no more
    assert client.zrange(keys.GRANTS_REVOKING, 0, -1, withscores=True) == [(f"{TEAM}:C0OPS:g1".encode(), float("inf"))]
    assert client.hget(keys.grants(TEAM, "C0OPS"), "g1:revoking") == b"{not a grant"  # kept for inspection
