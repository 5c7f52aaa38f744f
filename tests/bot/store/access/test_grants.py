"""A person's grant listing: their own page, whatever others hold; an entry without its grant (a writer killed
between the listing and the grant's transaction, or a revoke half done) is skipped and removed."""

from datetime import UTC, datetime, timedelta

import redis

from bot.domain.grants import Grant, call_digest
from bot.store import keys
from bot.store.access.grants import GrantStore
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
