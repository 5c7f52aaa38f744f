"""The approvals' indexes per workspace, per named approver and per person: their members and their bounded reads.

``ApprovalStore`` owns them: it writes an approval's entries in the transaction that publishes it, and the decide
script (every decision: a click, a reply, expiry, withdrawal, uninstall) removes them and records the decision's, in
its one atomic step. Each shard keeps two sorted sets in its own slot (``keys.open_by``, ``keys.recent_by``) whose
members sort by name (all scored 0): a prefix says whose entry it is, then a 13-digit time (ms), then the approval
id::

    w:<team>:<ms>:<aid>          open-by: waiting in the workspace (request time); recent-by: decided (decision time)
    a:<team>:<uid>:<ms>:<aid>    open-by: waiting, the rule names <uid> among its approvers
    g:<policy>:<ms>:<aid>        open-by: waiting under the rule <policy> (URL-quoted): the pending gauges count them
    c:<team>:<uid>:<ms>:<aid>    open-by: waiting, <uid> was sent a direct-message copy (escalation, on-call, DM)
    p:<team>:<uid>:<ms>:<aid>    recent-by: decided, <uid> decided, voted for or requested it

A page of a workspace's or a person's oldest (or newest) entries is one ``ZRANGE ... BYLEX LIMIT`` per shard, merged:
it costs the same whatever other workspaces and people hold. An entry whose record is gone is skipped by its reader
and removed then (``Entry``): a reader never trusts the index for more than where to look.
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

import redis

from bot.domain.records import ApprovalRequest
from bot.store import keys
from bot.store.approvals.approval_record import Approval
from state.text import as_text

OPEN_FIELD: Final = "indexed"
"""The approval's field that names its open-by members (``open_record``), so that the decide script removes exactly
those."""

_MS_DIGITS: Final = 13
_AFTER: Final = b"\xff"  # sorts after every character a member's time or id holds

IndexOf = Callable[[int], str]
"""The key of a shard index in a shard (``keys.open_by``, ``keys.recent_by``)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One index entry as read: the approval it names and where it is (to remove it once found stale)."""

    approval_id: str
    ms: int
    shard: int
    member: bytes


def workspace(team_id: str) -> str:
    """The prefix of a workspace's entries (open-by and recent-by)."""
    return f"w:{team_id}:"


def approver(team_id: str, user_id: str) -> str:
    """The prefix of the open entries whose rule names ``user_id`` among its approvers."""
    return f"a:{team_id}:{user_id}:"


def copy(team_id: str, user_id: str) -> str:
    """The prefix of the open entries of requests sent to ``user_id`` as a direct-message copy.

    Written with the copy's record (``bot.store.scripts.COMPLETE_POST``), added to the approval's ``OPEN_FIELD``: the
    decide script removes it with the others.
    """
    return f"c:{team_id}:{user_id}:"


def person(team_id: str, user_id: str) -> str:
    """The prefix of the decisions ``user_id`` made, voted for or asked for (recent-by)."""
    return f"p:{team_id}:{user_id}:"


def policy(name: str) -> str:
    """The prefix of the open entries of a rule (its name quoted: a ``:`` in it cannot reach another rule's)."""
    return f"{POLICY_PREFIX}{quote(name, safe='')}:"


POLICY_PREFIX: Final = "g:"
"""What every rule's open entries begin with (``bot.store.approvals.pending_gauges`` walks them rule by rule)."""


def member(prefix: str, ms: int, approval_id: str) -> str:
    """An entry: ``prefix``, the time as 13 digits (so that names sort by time), the approval id."""
    return f"{prefix}{ms:0{_MS_DIGITS}d}:{approval_id}"


def named_approvers(request: ApprovalRequest) -> list[str]:
    """The people the request's rule names as deciders (its own list and any other it must also satisfy)."""
    policy = request.policy
    named = [*policy.approver_users, *(user for extra in policy.also_approvers for user in extra.users)]
    return list(dict.fromkeys(user for user in named if user))


def open_members(request: ApprovalRequest, *, copied_to: Iterable[str] = ()) -> list[str]:
    """The open-by members of a request waiting for a decision (``copied_to``: who was sent a copy already)."""
    opened_ms = int(request.created_at.timestamp() * 1000)
    return [member(prefix, opened_ms, request.approval_id) for prefix in _open_prefixes(request, copied_to)]


def open_record(request: ApprovalRequest, *, copied_to: Iterable[str] = ()) -> str:
    """Its ``OPEN_FIELD`` (JSON): its open-by members' time (13 digits), then their prefixes.

    Each member is a prefix, the time and the approval id (the scripts' ``open_entries`` rebuilds them): the id and the
    time once, not once per member.
    """
    opened_ms = int(request.created_at.timestamp() * 1000)
    prefixes = _open_prefixes(request, copied_to)
    return json.dumps([f"{opened_ms:0{_MS_DIGITS}d}", *prefixes], separators=(",", ":"))


def _open_prefixes(request: ApprovalRequest, copied_to: Iterable[str] = ()) -> list[str]:
    return [
        workspace(request.team_id),
        *(approver(request.team_id, user) for user in named_approvers(request)),
        policy(request.policy.name),
        *(copy(request.team_id, user) for user in copied_to),
    ]


def decided_members(approval: Approval) -> list[str]:
    """The recent-by members of a decided approval, as the decide script writes them (the migration's copy)."""
    request, decision = approval.request, approval.decision
    if decision is None:
        return []
    decided_ms = int(decision.decided_at.timestamp() * 1000)
    people = dict.fromkeys(
        person for person in (decision.decided_by, *decision.approved_by, request.requested_by) if person
    )
    prefixes = [workspace(request.team_id), *(person(request.team_id, each) for each in people)]
    return [member(prefix, decided_ms, request.approval_id) for prefix in prefixes]


def page(client: redis.Redis, index: IndexOf, prefix: str, *, limit: int, newest_first: bool) -> list[Entry]:
    """The ``limit`` oldest (or newest) entries under ``prefix`` over every shard: one bounded read per shard."""
    low, high = b"[" + prefix.encode(), b"(" + prefix.encode() + _AFTER
    reads = client.pipeline(transaction=False)
    for shard in keys.shards():
        if newest_first:
            reads.zrange(index(shard), high, low, desc=True, bylex=True, offset=0, num=limit)
        else:
            reads.zrange(index(shard), low, high, bylex=True, offset=0, num=limit)
    entries = [
        entry
        for shard, members in zip(keys.shards(), reads.execute(), strict=True)
        for raw in members
        if (entry := _entry(shard, raw, len(prefix.encode()))) is not None
    ]
    entries.sort(key=lambda entry: (entry.ms, entry.approval_id), reverse=newest_first)
    return entries[:limit]


def remove(client: redis.Redis, index: IndexOf, entries: Iterable[Entry]) -> None:
    """Remove stale entries (their record is gone or no longer fits), each from its own shard's index."""
    by_shard: dict[int, list[bytes]] = {}
    for entry in entries:
        by_shard.setdefault(entry.shard, []).append(entry.member)
    if not by_shard:
        return
    writes = client.pipeline(transaction=False)
    for shard, members in by_shard.items():
        writes.zrem(index(shard), *members)
    writes.execute()


def remove_all_of(client: redis.Redis, index: IndexOf, entries: Iterable[Entry]) -> None:
    """Remove every member naming each entry's approval from its shard's index, not only the one read.

    For an approval whose record is gone while it waited (never through the product: a waiting record has no TTL;
    a lost write or a hand's ``DEL``): its other members (its approvers', the gauges' ``g:`` one) would otherwise
    stay listed and counted. A scan of that shard's index, paid once per such approval.
    """
    for entry in entries:
        pattern = "*:" + _glob_escaped(entry.approval_id)
        members = list(client.zscan_iter(index(entry.shard), match=pattern, count=1000))
        if members:
            client.zrem(index(entry.shard), *(member for member, _score in members))


def _glob_escaped(text: str) -> str:
    return "".join(f"\\{char}" if char in "*?[]\\" else char for char in text)


def _entry(shard: int, raw: bytes, prefix_bytes: int) -> Entry | None:
    # A member not in our form (another prefix that this one begins, foreign data) is skipped, never trusted.
    rest = raw[prefix_bytes:]
    stamp, colon, approval_id = rest[:_MS_DIGITS], rest[_MS_DIGITS : _MS_DIGITS + 1], rest[_MS_DIGITS + 1 :]
    if not stamp.isdigit() or colon != b":" or not approval_id:
        return None
    try:
        return Entry(as_text(approval_id), int(stamp), shard, raw)
    except UnicodeDecodeError:
        return None
