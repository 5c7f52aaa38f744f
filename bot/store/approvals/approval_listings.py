"""What waits and what was decided, listed from the approvals' indexes a bounded page at a time.

``ApprovalStore`` (``bot.store.approvals.approvals``), the indexes' one owner, is these listings: its publish and decide
write the indexes (``bot.store.approvals.approval_index`` says how), these read them. A stale entry (its record gone) is
skipped and removed as it is read.
"""

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import redis
from redis.commands.core import Script

from bot.store import keys, scripts
from bot.store.approvals import approval_index
from bot.store.approvals.approval_record import Approval
from state.text import as_text

logger = logging.getLogger(__name__)

Seen = dict[str, Approval | None]
"""Approvals read already, by id (``None``: gone or unreadable): a reader of several pages passes one to each, and
an approval two pages list is read once."""


class ApprovalListings:
    """The listings of ``ApprovalStore``, which supplies ``_client``, its scripts and its two readers below."""

    _client: redis.Redis
    _index_open: Script
    _drop_idle_channel: Script

    def get_many_readable(self, ids: Sequence[tuple[str, str]]) -> list[Approval | None]:
        """Many approvals, unreadable ones quarantined (``ApprovalStore.get_many_readable``)."""
        raise NotImplementedError

    def find_readable(self, approval_id: str) -> Approval | None:
        """One approval by id, an unreadable one quarantined (``ApprovalStore.find_readable``)."""
        raise NotImplementedError

    def find_many_readable(self, approval_ids: Sequence[str]) -> list[Approval | None]:
        """``find_readable`` of many ids, in their order: two round trips however many."""
        sharded = [(approval_id, keys.approval_shard(approval_id)) for approval_id in approval_ids]
        found = self._approvals_of(
            [approval_index.Entry(approval_id, 0, shard, b"") for approval_id, shard in sharded if shard is not None]
        )
        # An id that names no shard (minted before shards) is looked up in each, alone.
        return [
            found.pop(0) if shard is not None else self.find_readable(approval_id) for approval_id, shard in sharded
        ]

    def open_everywhere(self) -> list[str]:
        """Ids of approvals waiting anywhere, oldest first (all of them: callers filter, never truncate)."""
        return self._merged([keys.open_index(shard) for shard in keys.shards()])

    def open_in_channel(self, team_id: str, channel_id: str, *, limit: int = 0) -> list[str]:
        """Ids of the ``limit`` (0: all) approvals waiting longest in one channel, oldest first."""
        return self._merged([keys.channel_open(shard, team_id, channel_id) for shard in keys.shards()], limit=limit)

    def channels_waiting(self, team_id: str) -> dict[str, list[int]]:
        """The channels of a workspace where approvals were opened (and may still wait), each with its shards.

        One read per shard: what ``open_in_channels`` reads a page of.
        """
        reads = self._client.pipeline(transaction=False)
        for shard in keys.shards():
            reads.smembers(keys.open_channels(shard, team_id))
        waiting: dict[str, list[int]] = {}
        for shard, channels in zip(keys.shards(), reads.execute(), strict=True):
            for channel in channels:
                waiting.setdefault(as_text(channel), []).append(shard)
        return dict(sorted(waiting.items()))

    def open_in_channels(
        self, team_id: str, channels: Mapping[str, Sequence[int]], *, limit: int, seen: Seen | None = None
    ) -> list[Approval]:
        """The ``limit`` approvals waiting longest in ``channels`` (``channels_waiting``'s), oldest first.

        A page of each channel in each shard that lists it. A channel whose index is found empty in a shard leaves
        that shard's list, atomically with the publish that would add to it.
        """
        places = [(shard, channel_id) for channel_id, shards in channels.items() for shard in shards]
        reads = self._client.pipeline(transaction=False)
        for shard, channel_id in places:
            reads.zrange(keys.channel_open(shard, team_id, channel_id), 0, limit - 1, withscores=True)
        scored: list[tuple[float, bytes, int, str]] = []
        for (shard, channel_id), members in zip(places, reads.execute() if places else [], strict=True):
            if not members:
                self._drop_idle_channel(
                    keys=scripts.DROP_IDLE_CHANNEL.key_list(
                        channels_key=keys.open_channels(shard, team_id),
                        channel_open_key=keys.channel_open(shard, team_id, channel_id),
                    ),
                    args=scripts.DROP_IDLE_CHANNEL.arg_list(channel_id=channel_id),
                )
            scored.extend((score, member, shard, channel_id) for member, score in members)
        scored.sort(key=lambda item: (item[0], item[1]))
        entries = []
        for score, member, shard, channel_id in scored[:limit]:
            try:
                entries.append((approval_index.Entry(as_text(member), int(score), shard, member), channel_id))
            except UnicodeDecodeError:
                continue  # not ours: its channel's own reader (``open_in_channel``) removes it
        found = self._approvals_of([entry for entry, _channel in entries], seen)
        for (entry, channel_id), approval in zip(entries, found, strict=True):
            if approval is None:  # its record is gone
                self._client.zrem(keys.channel_open(entry.shard, team_id, channel_id), entry.member)
        return [
            each for each in found if each is not None and each.decision is None and each.request.team_id == team_id
        ]

    def open_in_workspace(self, team_id: str, *, limit: int, seen: Seen | None = None) -> list[Approval]:
        """The ``limit`` approvals waiting longest in a workspace, oldest first (bounded, whatever others hold)."""
        return self._open_page(approval_index.workspace(team_id), team_id, limit=limit, seen=seen)

    def open_for_approver(self, team_id: str, user_id: str, *, limit: int, seen: Seen | None = None) -> list[Approval]:
        """The ``limit`` approvals waiting longest whose rule names ``user_id`` among its deciders, oldest first."""
        found = self._open_page(approval_index.approver(team_id, user_id), team_id, limit=limit, seen=seen)
        return [approval for approval in found if user_id in approval_index.named_approvers(approval.request)]

    def open_copied_to(self, team_id: str, user_id: str, *, limit: int, seen: Seen | None = None) -> list[Approval]:
        """The ``limit`` approvals waiting longest that ``user_id`` was sent a direct-message copy of, oldest first."""
        found = self._open_page(approval_index.copy(team_id, user_id), team_id, limit=limit, seen=seen)
        return [approval for approval in found if user_id in approval.copies]

    def waiting_in_channel(self, team_id: str, channel_id: str) -> int:
        """How many approvals wait in one channel: one ``ZCARD`` per shard, whatever the count."""
        reads = self._client.pipeline(transaction=False)
        for shard in keys.shards():
            reads.zcard(keys.channel_open(shard, team_id, channel_id))
        return sum(int(count) for count in reads.execute())

    def decided_in_workspace(self, team_id: str, *, limit: int, seen: Seen | None = None) -> list[Approval]:
        """The workspace's ``limit`` latest decided approvals, newest first."""
        return self._decided_page(approval_index.workspace(team_id), team_id, limit=limit, seen=seen)

    def decided_for(self, team_id: str, user_id: str, *, limit: int, seen: Seen | None = None) -> list[Approval]:
        """The ``limit`` latest decided approvals of a workspace that ``user_id`` decided, voted for or asked for."""
        return self._decided_page(approval_index.person(team_id, user_id), team_id, limit=limit, seen=seen)

    def index_existing(self, shard: int, *, batch: int = 500) -> tuple[int, int]:
        """List the shard's approvals stored before the indexes were kept: what waits, and the latest decided.

        Idempotent, and safe beside running bots (a waiting approval is listed atomically with its record: never
        once decided). Returns how many waiting and decided approvals were listed.
        """
        waiting = self._merged([keys.open_index(shard)])
        listed = 0
        for start in range(0, len(waiting), batch):
            for approval in self.find_many_readable(waiting[start : start + batch]):
                if approval is None or approval.decision is not None:
                    continue
                request = approval.request
                copied_to = sorted(approval.copies)  # its copies' people, as a copy posted now is listed
                members = approval_index.open_members(request, copied_to=copied_to)
                self._client.sadd(keys.open_channels(shard, request.team_id), request.channel_id)
                added = self._index_open(
                    keys=scripts.INDEX_OPEN.key_list(
                        approval_key=keys.approval(request.session_id, request.approval_id),
                        open_by_key=keys.open_by(shard),
                    ),
                    args=scripts.INDEX_OPEN.arg_list(
                        *members, indexed=approval_index.open_record(request, copied_to=copied_to)
                    ),
                )
                listed += int(added) > 0
        # The latest decisions, as a version before ``recent_by`` listed them (a decision since is in recent-by):
        # listed, then their list goes (nothing writes it any more).
        recent = self._merged([keys.recent_decisions(shard)])
        writes = self._client.pipeline(transaction=False)
        for approval in self.find_many_readable(recent):
            if approval is not None and approval.decision is not None:
                writes.zadd(keys.recent_by(shard), dict.fromkeys(approval_index.decided_members(approval), 0))
        writes.delete(keys.recent_decisions(shard))
        *added, _deleted = writes.execute()
        return listed, sum(1 for each in added if each)

    def _open_page(self, prefix: str, team_id: str, *, limit: int, seen: Seen | None) -> list[Approval]:
        entries = approval_index.page(self._client, keys.open_by, prefix, limit=limit, newest_first=False)
        found = self._approvals_of(entries, seen)
        approval_index.remove(  # decided before the indexes were kept atomically with it
            self._client,
            keys.open_by,
            [
                entry
                for entry, approval in zip(entries, found, strict=True)
                if approval is not None and approval.decision
            ],
        )
        approval_index.remove_all_of(  # its record gone: its other members too (approvers', the gauges')
            self._client,
            keys.open_by,
            [entry for entry, approval in zip(entries, found, strict=True) if approval is None],
        )
        return [
            each for each in found if each is not None and each.decision is None and each.request.team_id == team_id
        ]

    def _decided_page(self, prefix: str, team_id: str, *, limit: int, seen: Seen | None) -> list[Approval]:
        entries = approval_index.page(self._client, keys.recent_by, prefix, limit=limit, newest_first=True)
        found = self._approvals_of(entries, seen)
        approval_index.remove(
            self._client,
            keys.recent_by,
            [entry for entry, approval in zip(entries, found, strict=True) if approval is None],
        )
        return [each for each in found if each is not None and each.decision and each.request.team_id == team_id]

    def _approvals_of(self, entries: Sequence[approval_index.Entry], seen: Seen | None = None) -> list[Approval | None]:
        """The approvals ``entries`` name, in order (``None``: gone, or unreadable and quarantined): 2 round trips.

        Each is read once: not again if ``seen`` holds it (what is read is added to it).
        """
        seen = {} if seen is None else seen
        unread = list({entry.approval_id: entry for entry in entries if entry.approval_id not in seen}.values())
        sessions = self._client.pipeline(transaction=False)
        for entry in unread:
            sessions.get(keys.approval_session(entry.shard, entry.approval_id))
        located = [
            (entry, as_text(session_id))
            for entry, session_id in zip(unread, sessions.execute() if unread else [], strict=True)
            if session_id is not None
        ]
        read = (
            self.get_many_readable([(session_id, entry.approval_id) for entry, session_id in located])
            if located
            else []
        )
        seen.update(dict.fromkeys((entry.approval_id for entry in unread), None))
        seen.update((entry.approval_id, approval) for (entry, _session_id), approval in zip(located, read, strict=True))
        return [seen[entry.approval_id] for entry in entries]

    def _merged(self, indexes: list[str], *, newest_first: bool = False, limit: int = 0) -> list[str]:
        """The members of every shard's ``indexes`` as approval ids, merged by score.

        ``limit`` per index (0: all); one that is not UTF-8 (never ours) is dropped from its index.
        """
        reads = self._client.pipeline(transaction=False)
        for index in indexes:
            reads.zrange(index, 0, limit - 1, withscores=True, desc=newest_first)
        scored = [
            (score, member, index)
            for index, members in zip(indexes, reads.execute(), strict=True)
            for member, score in members
        ]
        scored.sort(key=lambda item: (-item[0], item[1]) if newest_first else (item[0], item[1]))
        approval_ids = []
        for _score, member, index in scored:
            try:
                approval_ids.append(as_text(member))
            except UnicodeDecodeError:
                logger.error("index=<%s>, member=<%r> | not an approval id (not UTF-8), removed", index, member)
                self._client.zrem(index, member)
        return approval_ids[:limit] if limit else approval_ids

    def open_policies(self, *, limit: int = 10_000) -> list[tuple[float, str]]:
        """(requested at, unix s; its policy's name) of the ``limit`` oldest approvals waiting anywhere.

        The metrics' view: three round trips, whatever is pending; a policy that cannot be read back is ``unknown``.
        """
        reads = self._client.pipeline(transaction=False)
        for shard in keys.shards():
            reads.zrange(keys.open_index(shard), 0, limit - 1, withscores=True)
        scored = sorted((score, as_text(member)) for members in reads.execute() for member, score in members)[:limit]
        located = [(approval_id, keys.approval_shard(approval_id) or 0) for _score, approval_id in scored]
        sessions = self._client.pipeline(transaction=False)
        for approval_id, shard in located:
            sessions.get(keys.approval_session(shard, approval_id))
        session_ids = sessions.execute()
        found = [(index, as_text(session_id)) for index, session_id in enumerate(session_ids) if session_id]
        terms_reads = self._client.pipeline(transaction=False)
        for index, session_id in found:
            terms_reads.hget(keys.approval(session_id, located[index][0]), "terms")
        stored: dict[int, Any] = dict(zip((index for index, _ in found), terms_reads.execute(), strict=True))
        policies = []
        for index, (score, _approval_id) in enumerate(scored):
            try:
                policies.append((score / 1000, str(json.loads(stored[index])["policy"]["name"])))
            except (TypeError, ValueError, KeyError):
                policies.append((score / 1000, "unknown"))
        return policies
