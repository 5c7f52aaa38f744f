"""Trusts of sessions in Redis: listed for both people who may end them, revoked once, and an unreadable record is
never in force (neither trusted nor listed)."""

from datetime import UTC, datetime

import redis

from bot.domain.trusts import Trust
from bot.store import keys
from bot.store.access.trusts import TrustStore


def _trust(tool: str, *, session_id: str = "s-trust-1") -> Trust:
    return Trust(
        session_id=session_id,
        tool=tool,
        trusted_by="U0APPROVER",
        requester="U0REQUESTER",
        team_id="T0TEAM",
        channel_id="C0CHAN",
        thread_ts="1700000000.000100",
        approval_id="a-1",
        trusted_at=datetime(2026, 12, 6, tzinfo=UTC),
    )


def test_a_trust_is_listed_for_who_trusted_it_and_the_requester_and_revoked_once(redis_client: redis.Redis) -> None:
    trusts = TrustStore(redis_client, kept_s=3600)
    trusts.record(_trust("inspect_files"))
    assert trusts.tools("s-trust-1") == {"inspect_files"}
    assert [trust.tool for trust in trusts.of_user("T0TEAM", "U0APPROVER")] == ["inspect_files"]
    assert [trust.tool for trust in trusts.of_user("T0TEAM", "U0REQUESTER")] == ["inspect_files"]
    assert trusts.of_user("T0OTHER", "U0APPROVER") == []
    revoked = trusts.revoke("s-trust-1", "inspect_files")
    assert revoked is not None
    assert revoked.trusted_by == "U0APPROVER"
    assert trusts.revoke("s-trust-1", "inspect_files") is None
    assert trusts.tools("s-trust-1") == set()
    assert trusts.of_user("T0TEAM", "U0REQUESTER") == []


def test_an_unreadable_trust_is_not_in_force_and_does_not_hide_the_readable_ones(redis_client: redis.Redis) -> None:
    trusts = TrustStore(redis_client, kept_s=3600)
    trusts.record(_trust("inspect_files"))
    trusts.record(_trust("delete_files"))
    redis_client.hset(keys.trusts("s-trust-1"), "delete_files", '{"tool": "delete_files", "broken": ')
    assert trusts.get("s-trust-1", "delete_files") is None
    assert trusts.tools("s-trust-1") == {"inspect_files"}
    assert [trust.tool for trust in trusts.of_user("T0TEAM", "U0APPROVER")] == ["inspect_files"]
