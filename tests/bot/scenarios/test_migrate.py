"""``python -m bot migrate``: data written before shards (one server, global queues) is moved, and the bot
carries on with it: a request asked before the upgrade is decided after it, and its agent resumes."""

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.render import action_ids as ids
from bot.store import keys
from bot.store.access.api_keys import ApiKeys
from bot.store.shard_migration import migrate
from tests.bot.support.harness import demo_factory, running_bot
from tests.bot.support.people import APPROVER
from tests.bot.support.policy_files import write
from tests.bot.support.processes import run_bot

_SHARDED = re.compile(r"^signoff:\{s\d+\.\d+\}:(.*)$")
_GLOBAL = (
    "signoff:seen-signature:",
    "signoff:event:",
    "signoff:home-seen",
    "signoff:channel-members:",
    "signoff:layout:",  # the shard count the data is written with: recorded by the first process
)


def _as_written_before_shards(client: redis.Redis) -> set[str]:
    """Rewrite every sharded key under its name before shards (``signoff:{<tag>}:<rest>`` -> ``signoff:<rest>``:
    ``signoff:{<sid>}:...`` per session, ``signoff:jobs``, ``signoff:outbox``... global), merging the shards'
    structures, and the recent decisions as the list they were. Returns the old names."""
    streams: dict[str, list[tuple[bytes, dict[bytes, bytes]]]] = defaultdict(list)
    for key in _names(client):
        match = _SHARDED.match(key)
        if match is None:
            continue
        old = f"signoff:{match.group(1)}"
        never_had = old.startswith("signoff:team:") or ":taken:" in old  # a due queue's claim record
        if old in ("signoff:open-by", "signoff:recent-by") or never_had:  # indexes and claim records it never had
            client.delete(key)
            continue
        kind = _text(client.type(key))
        if kind == "stream":
            streams[old].extend(client.xrange(key))  # type: ignore[arg-type]
        elif kind == "zset" and old == "signoff:recent-decisions":
            newest_first: Any = client.zrange(key, 0, -1, desc=True)
            client.rpush(old, *newest_first)
        elif kind == "zset":
            scored: Any = client.zrange(key, 0, -1, withscores=True)
            client.zadd(old, dict(scored))
        elif kind == "hash":
            client.hset(old, mapping=client.hgetall(key))  # type: ignore[arg-type]
        else:
            client.rename(key, old)
            continue
        client.delete(key)
    for old, entries in streams.items():
        for entry_id, fields in sorted(entries, key=lambda entry: tuple(map(int, entry[0].split(b"-")))):
            client.xadd(old, fields, id=entry_id)  # type: ignore[arg-type]
    return set(_names(client))


POLICY = """
rules:
  - name: service-changes
    match: {tools: [restart_service]}
    reminders: {every: 15m}
"""


@pytest.mark.single_redis  # the layout before shards never ran on a cluster
def test_a_request_asked_before_the_upgrade_is_decided_and_resumed_after_the_migration(
    redis_client: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    policy = write(tmp_path, POLICY)
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, session_id = bot.ask("restart checkout")
        audited = len(list(bot.services.stores.audit.entries()))
        old_names = _as_written_before_shards(redis_client)
        assert {"signoff:interrupted", "signoff:open-approvals", "signoff:audit", "signoff:schedule"} <= old_names
        assert f"signoff:{{{session_id}}}:session" in old_names
        assert bot.services.stores.sessions.interrupted_sessions() == []  # the new layout sees nothing yet

        listed = run_bot(["migrate"], REDIS_URL=redis_url)
        assert listed.returncode == 0, listed.stderr

        left = [name for name in _names(redis_client) if not _SHARDED.match(name)]
        assert [name for name in left if not name.startswith(_GLOBAL)] == []  # only what was never sharded
        assert bot.services.stores.sessions.interrupted_sessions() == [session_id]
        assert bot.services.stores.approvals.open_everywhere() == [approval_id]
        [waiting] = bot.services.stores.approvals.open_in_workspace("T0TEST", limit=5)  # its indexes built too
        assert waiting.request.approval_id == approval_id
        assert bot.services.stores.schedule.pending() == 2  # its reminder and its expiry (the default)
        assert len(list(bot.services.stores.audit.entries())) == audited
        assert migrate(redis_client) == {}  # a second run finds nothing left to move

        bot.services.stores.jobs.ensure_group()
        assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
        bot.drain()
        thread_ts = str(bot.approval_messages()[0]["thread_ts"])
        assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"


def _names(client: redis.Redis) -> list[str]:
    return [_text(raw) for raw in client.keys("*")]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def test_migrate_leaves_the_api_keys_and_grants_where_the_bot_reads_them(redis_client: redis.Redis) -> None:
    """Their hash tags (``{api-keys}``, ``{grants:<team>:<channel>}``) are no session ids: nothing of them moves."""
    issued = ApiKeys(redis_client).create("ci", team_id="T0TEST")
    assert issued is not None
    grants_key = keys.grants("T0TEST", "C0OPS")
    redis_client.hset(grants_key, "g1", "{}")
    before = set(_names(redis_client))

    migrate(redis_client)

    assert ApiKeys(redis_client).authenticate(issued.key) is not None, "the client's key still works"
    assert [client.name for client in ApiKeys(redis_client).all()] == ["ci"]
    assert redis_client.hget(grants_key, "g1") == b"{}"
    assert before <= set(_names(redis_client))
