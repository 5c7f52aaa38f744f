"""The outbox: Slack calls the bot owes, kept in Redis until Slack has taken them.

Entries are queued in the same transaction as the change that makes them due (an approval round, a decision), so a crash
or a Slack outage never loses one. A dispatcher claims due entries with a lease (``bot.store.queues.due``: a dispatcher
that dies releases them when the lease runs out), sends them, and completes or reschedules them: with exponential
backoff (jittered, capped at ``BACKOFF_CAP_S``), or after ``Retry-After`` on a 429 (not a failed attempt). Delivery is
at-least-once; senders make repeats harmless where Slack allows it.

Posting is where a repeat shows: a holder can post and die before completing. Each claim is counted, so the next holder
looks for an earlier one's copy first (``may_have_been_sent``); ``complete_post`` keeps one copy in the same step.

There is one outbox per shard (``bot.store.keys``): an entry about a session is queued on the session's shard
(``OutboxEntry.shard``), so it joins that session's transactions and scripts; a dispatcher claims from every shard.
"""

import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

import redis
from redis.cluster import RedisCluster

from bot.domain.records import place_of_session
from bot.observe.tracing import TRACE_FIELD, current_traceparent, valid_traceparent
from bot.store import keys, scripts
from bot.store.approvals.copy_listing import CopyListing
from bot.store.pipelined import run_each
from bot.store.queues.due import DueQueue, FencedWrites, claim_counted_each, soonest_due_s
from bot.store.queues.shard_trouble import ShardRests, each_shard
from bot.store.waits import bounded_wait_s
from state.text import as_text, bytes_of

logger = logging.getLogger(__name__)

_WAKE_TOKENS_KEPT: Final = 64
_WAKE_TOKENS_TEXT: Final = str(_WAKE_TOKENS_KEPT)  # as a script is told it
_POSTED_KEPT_S: Final = 86_400  # far longer than an entry can be retried: the record outlives every holder
_UNREADABLE_KEPT: Final = 10_000  # characters of an unreadable entry kept in its dead letter
_CLUSTER_WAIT_S: Final = 0.02  # on a cluster, how long an idle dispatcher waits on one shard before the next

AFTER: Final = "after"  # in a post_message payload: the entry whose message must be posted first


class OutboxKind(StrEnum):
    """What an entry asks of Slack (``bot.slack.outbound.delivery`` has one sender per kind)."""

    POST_APPROVAL = "post_approval"
    POST_APPROVAL_COPY = "post_approval_copy"
    UPDATE_APPROVAL = "update_approval"
    POST_ANSWER = "post_answer"
    POST_MESSAGE = "post_message"
    POST_EPHEMERAL = "post_ephemeral"
    PUBLISH_HOME = "publish_home"


def _ordered_id() -> str:
    # Entries due at the same millisecond are claimed in id order (ZRANGEBYSCORE breaks ties by member): a
    # time-ordered id keeps them first in, first out. Twelve random hex digits (a uuid4 costs a click 6 us more).
    return f"{time.time_ns():020d}-{os.urandom(6).hex()}"


@dataclass
class OutboxEntry:
    """One Slack call to make.

    Entries are made by the functions below (``post_message``, ``update_approval``, ...), never spelled
    by their callers.

    Attributes:
        kind: What to do (an ``OutboxKind``; a stored entry of another kind is parked by delivery).
        payload: Its data (JSON).
        attempts: Failed attempts so far.
        entry_id: Assigned when queued.
        claims: Times it was claimed, this claim included (not stored in the entry).
        shard: The shard whose outbox holds it: its session's (``keys.shard_of``), 0 for an entry about
            no session.
        team_id: The workspace whose token sends it ("" for an entry queued before workspaces were told apart:
            the one workspace of a single-token bot sends it).
        traceparent: The trace of the work that queued it (the current span's, when one is recorded), which its
            delivery continues.
    """

    kind: str
    payload: dict[str, Any]
    attempts: int = 0
    entry_id: str = field(default_factory=_ordered_id)
    claims: int = 0
    shard: int = 0
    team_id: str = ""
    traceparent: str = field(default_factory=current_traceparent)

    @property
    def may_have_been_sent(self) -> bool:
        """An earlier attempt failed or its holder vanished: Slack may have done the work anyway."""
        return self.attempts > 0 or self.claims > 1

    def to_json(self) -> str:
        """Serialize for Redis."""
        optional = {"team_id": self.team_id, TRACE_FIELD: self.traceparent}
        given = {name: value for name, value in optional.items() if value}
        return json.dumps({"kind": self.kind, "payload": self.payload, "attempts": self.attempts, **given})

    @classmethod
    def from_json(cls, entry_id: str, data: str, *, shard: int = 0) -> "OutboxEntry":
        """Restore from Redis.

        Raises:
            ValueError: ``data`` is not an entry (not JSON, or not ``kind``, ``payload``, ``attempts``, and
                ``team_id`` text if given).
        """
        try:
            decoded = json.loads(data)
        except (ValueError, RecursionError) as error:
            raise ValueError(f"entry=<{entry_id}> | not JSON: {type(error).__name__}") from None
        if not (
            isinstance(decoded, dict)
            and isinstance(decoded.get("kind"), str)
            and isinstance(decoded.get("payload"), dict)
            and type(decoded.get("attempts")) is int
            and isinstance(decoded.get("team_id", ""), str)
        ):
            raise ValueError(
                f"entry=<{entry_id}> | not an outbox entry (kind text, payload object, attempts number, team_id text)"
            )
        return cls(
            decoded["kind"],
            decoded["payload"],
            decoded["attempts"],
            entry_id,
            shard=shard,
            team_id=decoded.get("team_id", ""),
            traceparent=valid_traceparent(decoded.get(TRACE_FIELD)),  # telemetry only: a bad one is dropped
        )


class Outbox:
    """Queue, claim, complete and reschedule outbox entries (a ``DueQueue`` plus a wake-up list)."""

    def __init__(self, client: redis.Redis, *, clock: Callable[[], float] = time.time) -> None:
        """``clock`` returns seconds (injectable for tests)."""
        self._client = client
        self._queues = DueQueue.per_shard(
            client,
            due_key=keys.outbox_due,
            entries_key=keys.outbox_entries,
            claims_key=keys.outbox_claims,
            now_ms=lambda: int(clock() * 1000),
            name="outbox",
        )
        self._complete_post = client.register_script(scripts.COMPLETE_POST.text)
        self._want_home = client.register_script(scripts.WANT_HOME.text)
        self._complete_home = client.register_script(scripts.COMPLETE_HOME.text)
        self._wakes_apart = isinstance(client, RedisCluster)  # one BLPOP cannot span the masters
        self.rests = ShardRests()  # a cluster's master in trouble: its shard is skipped a moment

    @property
    def _queue(self) -> DueQueue:
        return self._queues[0]  # the clock, which every shard's queue shares

    def add(self, pipeline: redis.client.Pipeline | FencedWrites, entry: OutboxEntry, *, delay_s: float = 0) -> None:
        """Queue ``entry`` on its shard inside the caller's transaction (or with the caller's fenced writes)."""
        due_ms = self._queue.now_ms() + int(delay_s * 1000)
        self._queues[entry.shard].add(pipeline, entry.entry_id, entry.to_json(), due_ms=due_ms)
        pipeline.lpush(keys.outbox_wake(entry.shard), "1")
        pipeline.ltrim(keys.outbox_wake(entry.shard), 0, _WAKE_TOKENS_KEPT - 1)

    @staticmethod
    def script_entry(entry: OutboxEntry, *, due_ms: int) -> scripts.ScriptRecord:
        """``entry`` for a script to queue (``bot.store.scripts``, ``queue_outbox``) in its own atomic step."""
        return (entry.entry_id, entry.to_json(), str(due_ms), _WAKE_TOKENS_TEXT)

    @staticmethod
    def script_named_keys(shard: int) -> dict[str, str]:
        """The keys a script's ``queue_outbox`` takes for an entry of ``shard``, by the names the specs give them."""
        due, entries, wake = keys.outbox_due(shard), keys.outbox_entries(shard), keys.outbox_wake(shard)
        return {"outbox_due_key": due, "outbox_entries_key": entries, "outbox_wake_key": wake}

    def send_later(self, entry: OutboxEntry) -> None:
        """Queue ``entry`` on its own."""
        pipeline = self._client.pipeline(transaction=True)
        self.add(pipeline, entry)
        pipeline.execute()

    def want_home(self, *entries: OutboxEntry) -> int:
        """Ask for the App Home rebuilds ``entries`` (``home_refresh``), each merged with one queued or being built.

        Each is due when the person's tab was last published ``cooling_s`` ago (``complete_home``), so a burst of
        changes costs one rebuild per window. All in one round trip (one per master on a cluster). Returns how many
        were queued (the others merged).
        """
        spec = scripts.WANT_HOME
        calls = [
            (
                spec.key_list(
                    due_key=keys.outbox_due(entry.shard),
                    entries_key=keys.outbox_entries(entry.shard),
                    wake_key=keys.outbox_wake(entry.shard),
                    cooling_key=_cooling_key(entry),
                ),
                spec.arg_list(
                    entry_id=entry.entry_id, entry=entry.to_json(), now_ms=self.now_ms(), wake_kept=_WAKE_TOKENS_KEPT
                ),
            )
            for entry in entries
        ]
        answers = run_each(self._client, self._want_home, calls) if calls else []
        for answer in answers:
            if isinstance(answer, Exception):
                raise answer
        return sum(int(answer) for answer in answers)

    def complete_home(self, entry: OutboxEntry, *, cooling_s: float) -> bool:
        """``entry``'s App Home is published: complete it, unless a change came while it was built.

        That change is then shown by the same entry once ``cooling_s`` has passed (no update is lost, and none is
        published sooner). Returns whether it was completed.
        """
        spec, shard = scripts.COMPLETE_HOME, entry.shard
        keys_ = spec.key_list(
            due_key=keys.outbox_due(shard),
            entries_key=keys.outbox_entries(shard),
            claims_key=keys.outbox_claims(shard),
            cooling_key=_cooling_key(entry),
        )
        mark, cooling_ms = str(entry.payload.get(_CHANGE, "")), int(cooling_s * 1000)
        args = spec.arg_list(entry_id=entry.entry_id, mark=mark, now_ms=self.now_ms(), cooling_ms=cooling_ms)
        return bool(self._complete_home(keys=keys_, args=args))

    def claim(self, *, lease_s: float = 30, limit: int = 20) -> list[OutboxEntry]:
        """Take up to ``limit`` due entries of each shard for ``lease_s`` seconds, every shard in one round trip.

        One per master on a cluster: a dispatcher woken by a new entry asks once, not once per shard.
        """
        claimed: list[OutboxEntry] = []
        every_shard = claim_counted_each(self._client, self._queues, lease_s=lease_s, limit=limit, rests=self.rests)
        for shard, entries in enumerate(every_shard):
            for entry_id, text, claims in entries:
                try:
                    entry = OutboxEntry.from_json(entry_id, text, shard=shard)
                except ValueError as error:
                    self._quarantine(shard, entry_id, text, why=str(error))
                    continue
                entry.claims = claims
                claimed.append(entry)
        return claimed

    def _quarantine(self, shard: int, entry_id: str, text: str, *, why: str) -> None:
        """Move an unreadable entry to the dead letters (with why and what it held), out of the queue."""
        shown = bytes_of(text).decode(errors="backslashreplace")
        logger.error("entry=<%s> | unreadable outbox entry quarantined: %s", entry_id, why)
        raw_id = bytes_of(entry_id)
        dead = json.dumps({"unreadable": shown[:_UNREADABLE_KEPT], "why": why})
        pipeline = self._client.pipeline(transaction=True)
        pipeline.hset(keys.outbox_dead(shard), raw_id, dead)
        pipeline.zrem(keys.outbox_due(shard), raw_id)
        pipeline.hdel(keys.outbox_entries(shard), raw_id)
        pipeline.hdel(keys.outbox_claims(shard), raw_id)
        pipeline.execute()

    def park(self, entry: OutboxEntry, *, why: str) -> None:
        """Move an entry that cannot be delivered to its shard's dead letters, with why, out of the queue."""
        pipeline = self._client.pipeline(transaction=True)
        pipeline.hset(
            keys.outbox_dead(entry.shard),
            entry.entry_id,
            json.dumps({"entry": json.loads(entry.to_json()), "why": why}),
        )
        self._queues[entry.shard].remove(pipeline, entry.entry_id)
        pipeline.execute()

    def dead_letters(self) -> dict[str, dict[str, Any]]:
        """Every shard's parked entries: entry id -> what it held and why."""
        parked: dict[str, dict[str, Any]] = {}
        for shard in keys.shards():
            for entry_id, text in self._client.hgetall(keys.outbox_dead(shard)).items():
                parked[as_text(entry_id)] = json.loads(text)
        return parked

    def complete(self, entry: OutboxEntry) -> None:
        """Forget a delivered entry."""
        self._queues[entry.shard].complete(entry.entry_id)

    def complete_post(
        self,
        entry: OutboxEntry,
        *,
        copy: str,
        record_key: str | None = None,
        record: Sequence[tuple[str, str]] = (),
        listing: CopyListing | None = None,
    ) -> str:
        """Complete a posted entry and record which copy of its message is kept, in one step.

        Args:
            entry: The entry whose message was posted (or found posted by an earlier attempt).
            copy: What identifies that copy (e.g. its ts).
            record_key: A hash where the caller keeps its record of the copy, written in the same step (if it exists).
            record: Field, value pairs for ``record_key``; the first must hold ``copy`` (checked: a different value
                already there means another copy is kept).
            listing: Where ``record_key`` (an approval) lists the copy for its person, in that step (none once decided).

        Returns:
            The copy kept: ``copy``, or another one an earlier attempt recorded first (``copy`` is then one too many).
        """
        spec, shard, kept = scripts.COMPLETE_POST, entry.shard, record_key is not None
        keys_ = spec.key_list(
            posted_key=keys.outbox_posted(shard, entry.entry_id),
            due_key=keys.outbox_due(shard),
            entries_key=keys.outbox_entries(shard),
            claims_key=keys.outbox_claims(shard),
            caller_key=record_key,
            open_by_key=listing.index if kept and listing is not None else None,
        )
        args = spec.arg_list(
            *(item for pair in record for item in pair) if kept else (),
            entry_id=entry.entry_id,
            copy=copy,
            ttl_s=_POSTED_KEPT_S,
            open_by_prefix=listing.prefix if listing is not None else "",
            approval_id=listing.approval_id if listing is not None else "",
        )
        return as_text(self._complete_post(keys=keys_, args=args))

    def reschedule(self, entry: OutboxEntry, *, delay_s: float, counted: bool = True) -> None:
        """Try ``entry`` again after ``delay_s`` seconds, counting the failed attempt.

        ``counted=False``: Slack refused the call unprocessed (a 429): neither the backoff nor giving up counts it, and
        the next holder looks for a copy only if it would have anyway (an earlier attempt, or holder, may have posted).
        """
        if counted:
            entry.attempts += 1
        due_ms = self._queue.now_ms() + int(delay_s * 1000)
        reset_claims = not counted and entry.claims <= 1
        self._queues[entry.shard].reschedule(entry.entry_id, entry.to_json(), due_ms=due_ms, reset_claims=reset_claims)

    def postpone(self, entry: OutboxEntry, *, delay_s: float) -> None:
        """Try ``entry`` again after ``delay_s`` seconds; it was not its turn, nothing was sent.

        Neither an attempt nor this claim counts: the next holder does not look for a copy (only
        call this before anything is sent).
        """
        due_ms = self._queue.now_ms() + int(delay_s * 1000)
        self._queues[entry.shard].reschedule(entry.entry_id, entry.to_json(), due_ms=due_ms, reset_claims=True)

    def waits(self, entry_id: str, *, shard: int) -> bool:
        """Whether ``entry_id`` is still queued on ``shard``: neither delivered nor parked."""
        return bool(self._client.hexists(keys.outbox_entries(shard), entry_id))

    def pending(self) -> int:
        """How many entries wait (due or not), on every shard."""
        return sum(queue.pending() for queue in self._queues)

    def dead_count(self) -> int:
        """How many entries were parked as undeliverable, on every shard (they stay until an operator clears them)."""
        counts = self._client.pipeline(transaction=False)
        for shard in keys.shards():
            counts.hlen(keys.outbox_dead(shard))
        return sum(int(count) for count in counts.execute())

    def next_due_s(self) -> float | None:
        """Seconds until the soonest entry is due, on any shard (0: one is due now; ``None``: none waits)."""
        return soonest_due_s(self._client, self._queues, rests=self.rests)

    def now_ms(self) -> int:
        """The outbox's current time (its leases and due times run on it)."""
        return self._queue.now_ms()

    def wait_for_work(self, timeout_s: float) -> None:
        """Block until an entry is queued or ``timeout_s`` (at most ``BLOCKING_WAIT_MAX_S``) passes."""
        timeout = max(bounded_wait_s(timeout_s), 0.01)
        if not self._wakes_apart:
            self._client.blpop([keys.outbox_wake(shard) for shard in keys.shards()], timeout=timeout)
            return
        # On a cluster each shard's wake list lives on its own master: wait on each, all at once, briefly (a master
        # in trouble holds up its own shard only: ``bot.store.queues.shard_trouble``).
        deadline = time.monotonic() + timeout
        while True:
            woken = each_shard(
                len(keys.shards()),
                lambda shard: self._client.blpop([keys.outbox_wake(shard)], timeout=_CLUSTER_WAIT_S),
                self.rests,
                what="the outbox's wait",
                missing=None,
            )
            if any(woken) or time.monotonic() >= deadline:
                return


def home_refresh(user: str, *, team_id: str) -> OutboxEntry:
    """Re-publish ``user``'s App Home tab in ``team_id`` (queued with ``Outbox.want_home``).

    One entry per person and workspace: refreshes asked for meanwhile merge into it. Its change mark is new each
    time, so the entry's holder knows when one came while it built the tab.
    """
    payload = {"user": user, _CHANGE: uuid.uuid4().hex}
    return OutboxEntry(OutboxKind.PUBLISH_HOME, payload, entry_id=f"home:{team_id}:{user}", team_id=team_id)


_CHANGE: Final = "change"


def _cooling_key(entry: OutboxEntry) -> str:
    return keys.home_cooling(entry.shard, entry.team_id, str(entry.payload.get("user", "")))


REQUEST_CHANNEL: Final = "request_channel"
"""In a post_approval payload: the channel of a request whose session names none (the HTTP API's), so that its post
waits with the channel's other posts when Slack limits the channel (``bot.slack.outbound.lanes``)."""


def post_approval(session_id: str, approval_id: str, *, team_id: str = "", channel: str = "") -> OutboxEntry:
    """Post an approval's message in its thread (``team_id``, ``channel``: where, when the session id names neither)."""
    payload = {"session_id": session_id, "approval_id": approval_id, **({REQUEST_CHANNEL: channel} if channel else {})}
    shard = keys.shard_of(session_id)
    return OutboxEntry(OutboxKind.POST_APPROVAL, payload, shard=shard, team_id=_team(session_id) or team_id)


def post_approval_copy(session_id: str, approval_id: str, *, user: str) -> OutboxEntry:
    """Send ``user`` a direct-message copy of an approval's message (an on-call escalation)."""
    payload = {"session_id": session_id, "approval_id": approval_id, "user": user}
    shard = keys.shard_of(session_id)
    return OutboxEntry(OutboxKind.POST_APPROVAL_COPY, payload, shard=shard, team_id=_team(session_id))


def update_approval(session_id: str, approval_id: str) -> OutboxEntry:
    """Redraw an approval's messages to show what is stored now (a vote, a decision, a claim)."""
    payload = {"session_id": session_id, "approval_id": approval_id}
    shard = keys.shard_of(session_id)
    return OutboxEntry(OutboxKind.UPDATE_APPROVAL, payload, shard=shard, team_id=_team(session_id))


def post_answer(session_id: str, approval_id: str) -> OutboxEntry:
    """Post the answer a request was given in its thread, once (queued by the decide script with the answer)."""
    payload = {"session_id": session_id, "approval_id": approval_id}
    shard = keys.shard_of(session_id)
    return OutboxEntry(OutboxKind.POST_ANSWER, payload, shard=shard, team_id=_team(session_id))


def post_message(
    channel: str, text: str, *, team_id: str, thread_ts: str | None = None, session_id: str | None = None
) -> OutboxEntry:
    """Post ``text`` in ``channel`` of ``team_id``.

    In ``thread_ts``'s thread, if given; a user id as channel: a direct message.

    ``session_id``: the session it is about (its shard's outbox holds it: required when it is queued with
    the session's records).
    """
    payload = {"channel": channel, "text": text, **({"thread_ts": thread_ts} if thread_ts else {})}
    return OutboxEntry(OutboxKind.POST_MESSAGE, payload, shard=_shard(session_id), team_id=team_id)


def post_ephemeral(channel: str, *, team_id: str, user: str, text: str, thread_ts: str | None = None) -> OutboxEntry:
    """Show ``text`` to ``user`` only, in ``channel`` of ``team_id`` (in ``thread_ts``'s thread, if given)."""
    payload = {"channel": channel, "user": user, "text": text, **({"thread_ts": thread_ts} if thread_ts else {})}
    return OutboxEntry(OutboxKind.POST_EPHEMERAL, payload, team_id=team_id)


BACKOFF_CAP_S: Final = 30.0
"""The longest wait after a failed attempt: once Slack is back, every entry is tried again within it (plus a lease)."""


def backoff_s(attempts: int, *, spread: float = 1.0, base_s: float = 1.0, cap_s: float = BACKOFF_CAP_S) -> float:
    """Seconds to wait before the next attempt: 1, 2, 4, ... capped, times ``spread``.

    ``spread``: the fraction of that wait to take; a sender draws it at random (jitter, from 0.5 to 1), so that entries
    that failed together (an outage) do not all come back at the same instant.
    """
    return float(min(cap_s, base_s * 2 ** max(attempts - 1, 0))) * spread


def posts_in_order(
    parts: Sequence[dict[str, Any]], *, team_id: str, session_id: str | None = None
) -> list[OutboxEntry]:
    """Outbox entries posting ``parts`` (``chat.postMessage`` arguments) in ``team_id``, in this order.

    Each waits until the one before it is delivered, so a retry never lets a later part overtake (all on the shard of
    ``session_id``, the session they are about).
    """
    entries: list[OutboxEntry] = []
    for part in parts:
        after = {AFTER: entries[-1].entry_id} if entries else {}
        payload = {**part, **after}
        entries.append(OutboxEntry(OutboxKind.POST_MESSAGE, payload, shard=_shard(session_id), team_id=team_id))
    return entries


def _team(session_id: str) -> str:
    """The workspace of a thread's session ("" for another: the sender reads the team from its approval)."""
    return place_of_session(session_id)[0]


def _shard(session_id: str | None) -> int:
    return keys.shard_of(session_id) if session_id is not None else 0
