"""Moving data written before shards (one server, global queues) to the sharded layout (``python -m bot migrate``).

The layout before shards kept every session's keys under ``{<session id>}`` and the queues and
indexes in global keys (``signoff:jobs``, ``signoff:outbox``, ...). Its names are spelled here and
nowhere else (the live layout's are ``bot.store.keys``): no other code reads or writes them. Stop every
bot process first (the command refuses nothing, but a worker still on the old code would keep writing
the old layout); run it once, on the server that holds the data (the old layout never ran on a
cluster). It is idempotent: a second run finds nothing left to move.

What moves, and how:

- per-session keys (``signoff:{<sid>}:...``, Strands records included) are renamed, TTLs kept;
- the interrupted index, open-approval indexes, approval -> session pointers, quarantine notes and
  schedule go to the shard of the session they name; recent decisions become each shard's sorted
  set, scored by decision time;
- jobs are queued again on their session's shard (a job a worker held is delivered again: jobs are
  at-least-once and idempotent); outbox entries keep their ids and due times, on the shard of the
  session they name (shard 0 for the rest: the parts of one long answer stay together);
- the audit stream is split by session, keeping every entry's id (so its time and order), and the
  last export mark applies to every shard;
- wake-up tokens and delayed-job notices are dropped (they only hurry or quiet a running worker);
- the live layout's own tagged keys (``{api-keys}``, ``{grants:<team>:<channel>}``) stay as they are.

Approval ids minted before shards do not name a shard: buttons already posted keep working, the
approval is looked up in every shard.
"""

import functools
import json
from collections.abc import Callable
from typing import Any, Final

import redis

from bot.domain.records import session_id_for
from bot.store import keys
from state.store import interrupted_index, keys_for, shard_tag

_OLD_SESSION_KEYS: Final = "signoff:{*}:*"
_OLD_INTERRUPTED: Final = "signoff:interrupted"
_OLD_OPEN: Final = "signoff:open-approvals"
_OLD_CHANNEL_OPEN: Final = "signoff:channel:*:open"
_OLD_RECENT: Final = "signoff:recent-decisions"
_OLD_QUARANTINE: Final = "signoff:quarantine"
_OLD_APPROVAL_SESSION: Final = "signoff:approval:*:session"
_OLD_SCHEDULE_DUE: Final = "signoff:schedule"
_OLD_SCHEDULE_ENTRIES: Final = "signoff:schedule:entries"
_OLD_JOBS: Final = "signoff:jobs"
_OLD_OUTBOX_DUE: Final = "signoff:outbox"
_OLD_OUTBOX_ENTRIES: Final = "signoff:outbox:entries"
_OLD_OUTBOX_CLAIMS: Final = "signoff:outbox:claims"
_OLD_OUTBOX_DEAD: Final = "signoff:outbox:dead"
_OLD_OUTBOX_POSTED: Final = "signoff:outbox:posted:*"
_OLD_AUDIT: Final = "signoff:audit"
_OLD_AUDIT_EXPORTED: Final = "signoff:audit:exported"
_DROPPED: Final = ("signoff:outbox:wake", "signoff:job:*:told")


def _tag_of(key: str) -> str:
    return key.partition("{")[2].partition("}")[0]


_API_KEYS_TAG: Final = _tag_of(keys.API_CLIENTS)
_GRANTS_TAG_PREFIX: Final = _tag_of(keys.grants("", "")).removesuffix(":")  # ``grants:<team>:<channel>``
"""The live layout's own hash tags (the API keys', each channel's grants'): ``signoff:{*}:*`` matches them too."""


def migrate(client: redis.Redis) -> dict[str, int]:
    """Move every record of the layout before shards to its shard; return how many of each kind moved."""
    session_keys = _sessions(client)
    sessions_of = _approval_sessions(client)
    moved = {
        "session keys": session_keys,
        "interrupted sessions": _by_member(client, _OLD_INTERRUPTED, interrupted_index, lambda sid: sid),
        "approval pointers": len(sessions_of),
        "open approvals": _by_member(client, _OLD_OPEN, keys.open_index, sessions_of.get),
        "channel indexes": _channel_indexes(client, sessions_of),
        "recent decisions": _recent(client, sessions_of),
        "quarantined approvals": _quarantine(client),
        "scheduled steps": _schedule(client),
        "jobs": _jobs(client),
        "outbox entries": _outbox(client),
        "audit events": _audit(client),
    }
    for pattern in _DROPPED:
        for key in list(client.scan_iter(match=pattern)):
            client.delete(key)
    return {what: count for what, count in moved.items() if count}


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _sessions(client: redis.Redis) -> int:
    """Rename ``signoff:{<sid>}:<rest>`` to the session's shard: ``signoff:{<tag>}:{<sid>}:<rest>``."""
    count = 0
    tags = {shard_tag(shard) for shard in keys.shards()}
    for raw in list(client.scan_iter(match=_OLD_SESSION_KEYS)):
        key = _text(raw)
        session_id, _, rest = key.removeprefix("signoff:{").partition("}:")
        if session_id in tags:  # a key of the sharded layout (moved already)
            continue
        if session_id == _API_KEYS_TAG or session_id.startswith(_GRANTS_TAG_PREFIX):  # live keys, no session's
            continue
        try:
            new_prefix = keys_for(session_id).session.removesuffix(":session")
        except ValueError:
            continue  # not a session id of ours
        client.rename(key, f"{new_prefix}:{rest}")
        count += 1
    return count


def _approval_sessions(client: redis.Redis) -> dict[str, str]:
    """Move every approval -> session pointer to its session's shard; return them."""
    found: dict[str, str] = {}
    for raw in list(client.scan_iter(match=_OLD_APPROVAL_SESSION)):
        key = _text(raw)
        approval_id = key.removeprefix("signoff:approval:").removesuffix(":session")
        value = client.get(key)
        if value is None:
            continue
        session_id = found[approval_id] = _text(value)
        client.rename(key, keys.approval_session(keys.shard_of(session_id), approval_id))
    return found


def _by_member(
    client: redis.Redis, old: str, new: Callable[[int], str], session_of: Callable[[str], str | None]
) -> int:
    """Move each member of sorted set ``old`` (with its score) to ``new`` of the shard of its session."""
    members: list[tuple[bytes, float]] = client.zrange(old, 0, -1, withscores=True)  # type: ignore[assignment]
    for member, score in members:
        session_id = session_of(_text(member))
        client.zadd(new(keys.shard_of(session_id) if session_id else 0), {member: score})
    client.delete(old)
    return len(members)


def _channel_indexes(client: redis.Redis, sessions_of: dict[str, str]) -> int:
    count = 0
    for raw in list(client.scan_iter(match=_OLD_CHANNEL_OPEN)):
        key = _text(raw)
        team_id, _, channel_id = key.removeprefix("signoff:channel:").removesuffix(":open").partition(":")
        index = functools.partial(_channel_open, team_id=team_id, channel_id=channel_id)
        count += _by_member(client, key, index, sessions_of.get)
    return count


def _channel_open(shard: int, *, team_id: str, channel_id: str) -> str:
    return keys.channel_open(shard, team_id, channel_id)


def _recent(client: redis.Redis, sessions_of: dict[str, str]) -> int:
    """The old list (newest first) becomes each shard's sorted set; the order is kept by rank-based scores."""
    approval_ids = [_text(member) for member in client.lrange(_OLD_RECENT, 0, -1)]
    for rank, approval_id in enumerate(reversed(approval_ids)):
        session_id = sessions_of.get(approval_id)
        client.zadd(keys.recent_decisions(keys.shard_of(session_id) if session_id else 0), {approval_id: rank})
    client.delete(_OLD_RECENT)
    return len(approval_ids)


def _quarantine(client: redis.Redis) -> int:
    notes = client.hgetall(_OLD_QUARANTINE)
    for approval_id, note in notes.items():
        session_id = _field(note, "session_id")
        client.hset(keys.quarantine(keys.shard_of(session_id) if session_id else 0), approval_id, note)
    client.delete(_OLD_QUARANTINE)
    return len(notes)


def _field(text: bytes | str, name: str) -> str:
    """A text field of a JSON object ('' when it is not one, or has no such field)."""
    try:
        data = json.loads(text)
    except ValueError:
        return ""
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _schedule(client: redis.Redis) -> int:
    entries: dict[bytes, bytes] = client.hgetall(_OLD_SCHEDULE_ENTRIES)  # type: ignore[assignment]
    for entry_id, entry in entries.items():
        session_id = _field(entry, "session_id")
        shard = keys.shard_of(session_id) if session_id else 0
        due = client.zscore(_OLD_SCHEDULE_DUE, entry_id)
        client.hset(keys.schedule_steps(shard), entry_id, entry)
        if due is not None:
            client.zadd(keys.schedule_due(shard), {entry_id: due})
    client.delete(_OLD_SCHEDULE_DUE, _OLD_SCHEDULE_ENTRIES)
    return len(entries)


def _jobs(client: redis.Redis) -> int:
    entries: Any = client.xrange(_OLD_JOBS) if client.exists(_OLD_JOBS) else []
    for _entry_id, fields in entries:
        decoded = {_text(name): value for name, value in fields.items()}
        session_id = _text(decoded.get("session_id", b""))
        if not session_id and all(name in decoded for name in ("team_id", "channel_id", "thread_ts")):
            parts = (_text(decoded[name]) for name in ("team_id", "channel_id", "thread_ts"))
            session_id = session_id_for(*parts)
        client.xadd(keys.jobs(keys.shard_of(session_id) if session_id else 0), fields)
    client.delete(_OLD_JOBS)
    return len(entries)


def _outbox(client: redis.Redis) -> int:
    entries: dict[bytes, bytes] = client.hgetall(_OLD_OUTBOX_ENTRIES)  # type: ignore[assignment]
    shard_of_entry: dict[bytes, int] = {}
    for entry_id, entry in entries.items():
        payload = json.loads(entry).get("payload") if _field(entry, "kind") else None
        session_id = payload.get("session_id") if isinstance(payload, dict) else None
        shard = shard_of_entry[entry_id] = keys.shard_of(session_id) if isinstance(session_id, str) else 0
        due = client.zscore(_OLD_OUTBOX_DUE, entry_id)
        claims = client.hget(_OLD_OUTBOX_CLAIMS, entry_id)
        client.hset(keys.outbox_entries(shard), entry_id, entry)
        client.zadd(keys.outbox_due(shard), {entry_id: due if due is not None else 0})
        if claims is not None:
            client.hset(keys.outbox_claims(shard), entry_id, claims)
    for raw in list(client.scan_iter(match=_OLD_OUTBOX_POSTED)):
        posted_id = _text(raw).removeprefix("signoff:outbox:posted:")
        client.rename(raw, keys.outbox_posted(shard_of_entry.get(posted_id.encode(), 0), posted_id))
    for dead_id, dead in client.hgetall(_OLD_OUTBOX_DEAD).items():
        client.hset(keys.outbox_dead(0), dead_id, dead)
    client.delete(_OLD_OUTBOX_DUE, _OLD_OUTBOX_ENTRIES, _OLD_OUTBOX_CLAIMS, _OLD_OUTBOX_DEAD)
    return len(entries)


def _audit(client: redis.Redis) -> int:
    entries: Any = client.xrange(_OLD_AUDIT) if client.exists(_OLD_AUDIT) else []
    for entry_id, fields in entries:
        session_id = _text(fields.get(b"session_id", fields.get("session_id", b"")))
        # The same id: the entry keeps its time, and its shard's stream stays in order.
        client.xadd(keys.audit(keys.shard_of(session_id) if session_id else 0), fields, id=entry_id)
    exported = client.get(_OLD_AUDIT_EXPORTED)
    if exported is not None:
        for shard in keys.shards():
            client.set(keys.audit_exported(shard), exported)
    client.delete(_OLD_AUDIT, _OLD_AUDIT_EXPORTED)
    return len(entries)
