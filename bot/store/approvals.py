"""Approval rounds in Redis: one approval per interrupt, the first valid decision wins.

A *round* is the set of interrupts an agent stopped on. Opening a round stores every approval
request, queues their Slack messages in the outbox and marks them open, in one transaction, so
a crash never loses a request. A decision is one Lua script: it refuses a second decision
(reporting the first), counts votes toward a quorum, records the decision, cancels the
request's schedule (reminders, escalation, expiry), queues the message update and the audit
record, and, when it closes the round's last open approval, queues the resume job. A resume
job is therefore queued exactly once per round.
"""

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal

import redis
from pydantic import ValidationError

from bot.domain.records import ApprovalRequest, Decision, DiscussionEntry
from bot.store import keys
from bot.store.due import FencedWrites
from bot.store.outbox import OutboxEntry

logger = logging.getLogger(__name__)

SCHEDULE_KINDS: Final = ("remind", "escalate", "expire")
RECENT_KEPT: Final = 50
_QUARANTINE_WHY_MAX: Final = 500

# KEYS: 1 approval, 2 open set, 3 jobs, 4 round, 5 outbox due, 6 outbox entries, 7 outbox wake, 8 audit,
#       9 votes, 10 schedule due, 11 schedule entries, 12 open index, 13 recent decisions,
#       14 the channel's open index.
# ARGV: 1 kind, 2 user, 3 quorum, 4 votes the caller saw, 5 decision JSON (if this one decides),
#       6 approval id, 7 session id, 8 outbox entry id, 9 outbox entry JSON, 10 now ms,
#       11 audit at ms, 12 audit details JSON, 13 the ts of the typed reply deciding ('' for clicks
#       and the clock).
# Returns {'unknown'}, {'unseen'} (the reply was written before the approval message was posted),
# {'already', decision}, {'voted'} (this user already voted), {'retry'} (someone voted meanwhile),
# {'vote', count}, {'decided', 'queued'|'waiting'}.
_DECIDE: Final = f"""
if redis.call('HEXISTS', KEYS[1], 'request') == 0 then return {{'unknown', ''}} end
-- Slack ts values are compared as decimal strings: doubles lose the last microsecond digits.
local function ts_not_after(a, b)
  local a_s, a_f = string.match(a, '^(%d+)%.?(%d*)$')
  local b_s, b_f = string.match(b, '^(%d+)%.?(%d*)$')
  if not a_s or not b_s then return false end
  if tonumber(a_s) ~= tonumber(b_s) then return tonumber(a_s) < tonumber(b_s) end
  local width = math.max(#a_f, #b_f)
  return (a_f .. string.rep('0', width - #a_f)) <= (b_f .. string.rep('0', width - #b_f))
end
if ARGV[13] ~= '' then
  local message_ts = redis.call('HGET', KEYS[1], 'message_ts')
  if not message_ts or not ts_not_after(message_ts, ARGV[13]) then return {{'unseen', ''}} end
end
local previous = redis.call('HGET', KEYS[1], 'decision')
if previous then return {{'already', previous}} end
-- Undecided but not open: its round is over (a later round replaced it). It can answer nothing.
if redis.call('SISMEMBER', KEYS[2], ARGV[6]) == 0 then return {{'unknown', ''}} end
-- Read everything the last step needs before writing anything: never a half-recorded decision.
local round_version = redis.call('HGET', KEYS[4], 'version')
if not round_version then return {{'no_round', ''}} end
local function queue_update_and_audit(event)
  redis.call('HINCRBY', KEYS[1], 'version', 1)  -- the update shows this version or a later one, never an earlier
  redis.call('HSET', KEYS[6], ARGV[8], ARGV[9])
  redis.call('ZADD', KEYS[5], ARGV[10], ARGV[8])
  redis.call('LPUSH', KEYS[7], '1')
  redis.call('XADD', KEYS[8], '*', 'event', event, 'actor', ARGV[2], 'session_id', ARGV[7],
    'at_ms', ARGV[11], 'details', ARGV[12])
end
if ARGV[1] == 'approve' and tonumber(ARGV[3]) > 1 then
  if redis.call('SISMEMBER', KEYS[9], ARGV[2]) == 1 then return {{'voted', ''}} end
  if redis.call('SCARD', KEYS[9]) ~= tonumber(ARGV[4]) then return {{'retry', ''}} end
  redis.call('SADD', KEYS[9], ARGV[2])
  local votes = redis.call('SCARD', KEYS[9])
  if votes < tonumber(ARGV[3]) then
    queue_update_and_audit('vote')
    return {{'vote', tostring(votes)}}
  end
end
redis.call('HSET', KEYS[1], 'decision', ARGV[5])
redis.call('SREM', KEYS[2], ARGV[6])
for _, kind in ipairs({{'{"', '".join(SCHEDULE_KINDS)}'}}) do
  redis.call('ZREM', KEYS[10], ARGV[6] .. ':' .. kind)
  redis.call('HDEL', KEYS[11], ARGV[6] .. ':' .. kind)
end
redis.call('ZREM', KEYS[12], ARGV[6])
redis.call('ZREM', KEYS[14], ARGV[6])
redis.call('LPUSH', KEYS[13], ARGV[6])
redis.call('LTRIM', KEYS[13], 0, {RECENT_KEPT - 1})
queue_update_and_audit('decision')
if redis.call('SCARD', KEYS[2]) == 0 then
  redis.call('XADD', KEYS[3], '*', 'kind', 'resume', 'session_id', ARGV[7], 'version', round_version)
  return {{'decided', 'queued'}}
end
return {{'decided', 'waiting'}}
"""

# KEYS: approval, schedule due. ARGV: user, until ms, escalate entry id.
# Records the claim and pushes the next escalation back to the end of the pause.
_CLAIM: Final = """
if redis.call('HEXISTS', KEYS[1], 'request') == 0 then return 'unknown' end
if redis.call('HEXISTS', KEYS[1], 'decision') == 1 then return 'already' end
redis.call('HSET', KEYS[1], 'claimed_by', ARGV[1], 'claimed_until_ms', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'version', 1)  -- the message shows the claim: an update follows
redis.call('ZADD', KEYS[2], 'XX', 'GT', ARGV[2], ARGV[3])
return 'claimed'
"""

DecisionStatus = Literal["decided", "vote", "voted", "already", "unknown", "unseen", "retry", "no_round"]


class ApprovalDataError(RuntimeError):
    """An approval stored in Redis cannot be read back (corrupted or foreign data)."""


@dataclass(frozen=True)
class DecideResult:
    """What a decision attempt did.

    Attributes:
        status: ``decided`` (this one decided), ``vote`` (counted toward the quorum), ``voted``
            (this person voted already), ``already`` (a decision stands), ``unknown``, or
            ``unseen`` (a typed reply written before the approval message was posted), or ``retry``
            (another vote landed meanwhile: reload and try again).
        decision: The decision that stands, if any.
        votes: Approvals counted so far (for ``vote``).
    """

    status: DecisionStatus
    decision: Decision | None = None
    votes: int = 0


@dataclass(frozen=True)
class Approval:
    """An approval request and everything that happened to it so far."""

    request: ApprovalRequest
    decision: Decision | None
    discussion: tuple[DiscussionEntry, ...] = ()
    votes: frozenset[str] = frozenset()
    claimed_by: str | None = None
    claimed_until_ms: int | None = None
    level: int = 0
    copies: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Direct-message copies of the approval message: user -> (channel, ts)."""
    version: int = 0
    """Bumped with every queued message update: the state its messages should show."""
    post_entry: str | None = None
    """The outbox entry that posted the message (its marker stays on the message)."""


class ApprovalStore:
    """Reads and writes approval rounds. Thread-safe (redis-py pools connections)."""

    def __init__(self, client: redis.Redis) -> None:
        """Register the scripts; nothing is sent yet."""
        self._client = client
        self._decide = client.register_script(_DECIDE)
        self._claim = client.register_script(_CLAIM)

    def open_round(
        self,
        *,
        session_id: str,
        version: int,
        requests: Sequence[ApprovalRequest],
        pipeline: redis.client.Pipeline | None = None,
    ) -> list[ApprovalRequest]:
        """Store a round's requests and mark them open (in the caller's transaction, if given).

        A stored approval is never overwritten: a request whose approval already holds one (the
        same round published again) is left as it is, decided or not, and not opened again.

        Args:
            session_id: The session that stopped.
            version: The session's version once stopped; the resume job carries it.
            requests: One request per interrupt.
            pipeline: A MULTI pipeline to join (the caller adds the outbox entries and executes).

        Returns:
            The requests opened now (the caller posts their messages).
        """
        ids = [request.approval_id for request in requests]
        reads = self._client.pipeline(transaction=False)
        reads.hmget(keys.round_(session_id), ["version", "approvals"])
        for approval_id in ids:
            reads.hexists(keys.approval(session_id, approval_id), "request")
        (current_version, current_ids), *stored = reads.execute()
        fresh = [request for request, exists in zip(requests, stored, strict=True) if not exists]
        own = pipeline is None
        transaction = self._client.pipeline(transaction=True) if pipeline is None else pipeline
        if current_version is not None and int(current_version) == version:
            # The same round again: it keeps every approval it had, and gains the new ones.
            known: list[str] = json.loads(current_ids) if current_ids else []
            ids = known + [approval_id for approval_id in ids if approval_id not in known]
        else:
            transaction.delete(keys.open_approvals(session_id))  # a new round: the previous one is over
        transaction.hset(keys.round_(session_id), mapping={"version": version, "approvals": json.dumps(ids)})
        for request in fresh:
            # HSETNX: even a publisher racing this one cannot replace a stored request.
            transaction.hsetnx(keys.approval(session_id, request.approval_id), "request", request.model_dump_json())
            transaction.set(keys.approval_session(request.approval_id), session_id)
            opened_ms = int(request.created_at.timestamp() * 1000)
            transaction.zadd(keys.OPEN_INDEX, {request.approval_id: opened_ms})
            transaction.zadd(keys.channel_open(request.team_id, request.channel_id), {request.approval_id: opened_ms})
        if fresh:
            transaction.sadd(keys.open_approvals(session_id), *[request.approval_id for request in fresh])
        if own:
            transaction.execute()
        return fresh

    def session_of(self, approval_id: str) -> str | None:
        """The session an approval belongs to, or ``None`` for an unknown id."""
        value = self._client.get(keys.approval_session(approval_id))
        return _text(value) if value is not None else None

    def find(self, approval_id: str) -> Approval | None:
        """The approval behind an id (a button's value), or ``None``."""
        session_id = self.session_of(approval_id)
        return self.get(session_id, approval_id) if session_id is not None else None

    def get(self, session_id: str, approval_id: str) -> Approval | None:
        """Load one approval with its discussion and votes (one round trip).

        Raises:
            ApprovalDataError: The stored data is not a valid approval.
        """
        pipeline = self._client.pipeline(transaction=False)
        _read(pipeline, session_id, approval_id)
        fields, replies, votes = pipeline.execute()
        return _approval(approval_id, fields, replies, votes)

    def get_many_readable(self, ids: Sequence[tuple[str, str]]) -> list[Approval | None]:
        """``get_readable`` of many ``(session_id, approval_id)`` pairs in one round trip, in their order."""
        pipeline = self._client.pipeline(transaction=False)
        for session_id, approval_id in ids:
            _read(pipeline, session_id, approval_id)
        replies = pipeline.execute()
        approvals: list[Approval | None] = []
        for index, (session_id, approval_id) in enumerate(ids):
            fields, discussion, votes = replies[3 * index : 3 * index + 3]
            try:
                approvals.append(_approval(approval_id, fields, discussion, votes))
            except ApprovalDataError as error:
                self.quarantine(session_id, approval_id, why=str(error))
                approvals.append(None)
        return approvals

    def find_readable(self, approval_id: str) -> Approval | None:
        """``find`` for readers that list many approvals: an unreadable one is quarantined and skipped (``None``)."""
        session_id = self.session_of(approval_id)
        return self.get_readable(session_id, approval_id) if session_id is not None else None

    def get_readable(self, session_id: str, approval_id: str) -> Approval | None:
        """``get``, except that an unreadable approval is quarantined and ``None`` returned: one bad record
        never stops a reader (App Home, ``/approvals``, ``pending``, delivery) from serving the others."""
        try:
            return self.get(session_id, approval_id)
        except ApprovalDataError as error:
            self.quarantine(session_id, approval_id, why=str(error))
            return None

    def quarantine(self, session_id: str, approval_id: str, *, why: str) -> None:
        """Take an unreadable approval out of the open index and record why, for operators (``python -m bot pending``).

        The record itself stays in place, untouched, for inspection.
        """
        logger.error(
            "session_id=<%s>, approval_id=<%s> | unreadable approval quarantined: %s", session_id, approval_id, why
        )
        note = {
            "session_id": session_id,
            "why": " ".join(why.split())[:_QUARANTINE_WHY_MAX],
            "at_ms": int(time.time() * 1000),
        }
        pipeline = self._client.pipeline(transaction=True)
        pipeline.zrem(keys.OPEN_INDEX, approval_id)
        pipeline.hset(keys.QUARANTINE, approval_id, json.dumps(note))
        pipeline.execute()

    def quarantined(self) -> dict[str, dict[str, str]]:
        """Quarantined approvals: id -> ``{"session_id", "why", "at_ms"}``."""
        return {_text(key): json.loads(value) for key, value in self._client.hgetall(keys.QUARANTINE).items()}

    def round_approvals(self, session_id: str, *, readable_only: bool = False) -> tuple[int, list[Approval]]:
        """The current round's version and approvals, in the order they were raised.

        Args:
            session_id: The session.
            readable_only: Quarantine and leave out unreadable approvals instead of raising.

        Raises:
            ApprovalDataError: An approval (unless ``readable_only``) or the round itself cannot be read back.
        """
        fields = self._client.hgetall(keys.round_(session_id))
        if not fields:
            return 0, []
        try:
            decoded = {_text(key): _text(value) for key, value in fields.items()}
            approval_ids = json.loads(decoded["approvals"])
            version = int(decoded["version"])
            if not isinstance(approval_ids, list) or not all(isinstance(item, str) for item in approval_ids):
                raise ValueError("approvals is not a list of ids")
        except (KeyError, ValueError, RecursionError) as error:
            raise ApprovalDataError(f"session_id=<{session_id}> | stored round is unreadable: {error!r}") from error
        approvals = []
        read = self.get_readable if readable_only else self.get
        for approval_id in approval_ids:
            approval = read(session_id, approval_id)
            if approval is not None:
                approvals.append(approval)
        return version, approvals

    def expire_round(self, pipeline: redis.client.Pipeline, session_id: str, *, after_s: int) -> None:
        """Let the current round's records expire ``after_s`` from now (inside the caller's transaction).

        Called once its outcome is published: the round's approvals stay readable (App Home,
        late clicks answered "already decided") for the retention period, then go.
        """
        raw = self._client.hget(keys.round_(session_id), "approvals")
        for approval_id in json.loads(raw) if raw else []:
            for key in (
                keys.approval(session_id, approval_id),
                keys.discussion(session_id, approval_id),
                keys.votes(session_id, approval_id),
                keys.approval_session(approval_id),
            ):
                pipeline.expire(key, after_s)

    @staticmethod
    def message_record(request: ApprovalRequest, *, ts: str, entry_id: str) -> tuple[str, list[tuple[str, str]]]:
        """Where the approval message was posted, as ``Outbox.complete_post`` records it with the completion.

        Returns the approval's key and its fields: ``message_ts`` first (the record that is checked),
        then the entry whose marker the message carries (updates keep it).
        """
        return keys.approval(request.session_id, request.approval_id), [("message_ts", ts), ("post_entry", entry_id)]

    @staticmethod
    def copy_record(request: ApprovalRequest, *, user: str, channel: str, ts: str) -> tuple[str, list[tuple[str, str]]]:
        """A direct-message copy of the approval message (updated with the original), for ``complete_post``."""
        return keys.approval(request.session_id, request.approval_id), [(f"copy:{user}", copy_value(channel, ts))]

    def set_level(self, session_id: str, approval_id: str, level: int, *, target: FencedWrites | None = None) -> None:
        """Record how far up the escalation ladder the request went (through ``target``: with the caller's writes)."""
        (target or self._client).hset(keys.approval(session_id, approval_id), "level", level)

    def open_ids(self, session_id: str) -> set[str]:
        """Approval ids of the session still waiting for a decision."""
        return {_text(member) for member in self._client.smembers(keys.open_approvals(session_id))}

    def open_everywhere(self) -> list[str]:
        """Ids of approvals waiting anywhere, oldest first (all of them: callers filter, never truncate)."""
        members: list[bytes] = self._client.zrange(keys.OPEN_INDEX, 0, -1)  # type: ignore[assignment]
        return self._approval_ids(keys.OPEN_INDEX, members)

    def open_in_channel(self, team_id: str, channel_id: str) -> list[str]:
        """Ids of approvals waiting in one channel, oldest first."""
        index = keys.channel_open(team_id, channel_id)
        members: list[bytes] = self._client.zrange(index, 0, -1)  # type: ignore[assignment]
        return self._approval_ids(index, members)

    def _approval_ids(self, index: str, members: list[bytes]) -> list[str]:
        """An index's members as approval ids; one that is not UTF-8 (never ours) is dropped from the index."""
        approval_ids = []
        for member in members:
            try:
                approval_ids.append(_text(member))
            except UnicodeDecodeError:
                logger.error("index=<%s>, member=<%r> | not an approval id (not UTF-8), removed", index, member)
                self._client.zrem(index, member)
        return approval_ids

    def recent_decisions(self, *, limit: int = 10) -> list[str]:
        """Ids of the latest decided approvals, newest first."""
        return [_text(member) for member in self._client.lrange(keys.RECENT_DECISIONS, 0, limit - 1)]

    def add_discussion(self, session_id: str, approval_id: str, entry: DiscussionEntry) -> None:
        """Keep a thread reply with the approval; it travels with the decision."""
        self._client.rpush(keys.discussion(session_id, approval_id), entry.model_dump_json())

    def decide(
        self,
        approval: Approval,
        *,
        kind: str,
        user: str,
        quorum: int,
        decision: Decision,
        update: OutboxEntry,
        audit_details: str,
        now: datetime,
        written_at: str | None = None,
    ) -> DecideResult:
        """Count a vote or record ``decision``, atomically (see the module docstring).

        ``written_at`` is the ts of the typed reply that decides: the script refuses (``unseen``)
        unless the approval message was posted (its ts recorded) at or before it.
        """
        request = approval.request
        session_id, approval_id = request.session_id, request.approval_id
        now_ms = int(now.timestamp() * 1000)
        status, value = self._decide(
            keys=[
                keys.approval(session_id, approval_id),
                keys.open_approvals(session_id),
                keys.JOBS,
                keys.round_(session_id),
                keys.OUTBOX_DUE,
                keys.OUTBOX_ENTRIES,
                keys.OUTBOX_WAKE,
                keys.AUDIT,
                keys.votes(session_id, approval_id),
                keys.SCHEDULE_DUE,
                keys.SCHEDULE_ENTRIES,
                keys.OPEN_INDEX,
                keys.RECENT_DECISIONS,
                keys.channel_open(request.team_id, request.channel_id),
            ],
            args=[
                kind,
                user,
                quorum,
                len(approval.votes),
                decision.model_dump_json(),
                approval_id,
                session_id,
                update.entry_id,
                update.to_json(),
                now_ms,
                now_ms,
                audit_details,
                written_at or "",
            ],
        )
        status, value = _text(status), _text(value)
        if status == "already":
            return DecideResult("already", Decision.model_validate_json(value))
        if status == "vote":
            return DecideResult("vote", votes=int(value))
        if status == "decided":
            return DecideResult("decided", decision)
        return DecideResult(status)  # type: ignore[arg-type]  # unknown, unseen, voted, retry

    def claim(self, approval: Approval, *, user: str, until: datetime) -> str:
        """Record a claim and push the next escalation past it: ``claimed``, ``already`` or ``unknown``."""
        request = approval.request
        result = self._claim(
            keys=[keys.approval(request.session_id, request.approval_id), keys.SCHEDULE_DUE],
            args=[user, int(until.timestamp() * 1000), f"{request.approval_id}:escalate"],
        )
        return _text(result)


def _read(pipeline: redis.client.Pipeline, session_id: str, approval_id: str) -> None:
    """Queue the reads one approval is made of (its hash, discussion and votes)."""
    pipeline.hgetall(keys.approval(session_id, approval_id))
    pipeline.lrange(keys.discussion(session_id, approval_id), 0, -1)
    pipeline.smembers(keys.votes(session_id, approval_id))


def _approval(approval_id: str, fields: dict[bytes, bytes], replies: list[bytes], votes: set[bytes]) -> Approval | None:
    """The approval the reads of ``_read`` returned (``None``: there is none).

    Raises:
        ApprovalDataError: The stored data is not a valid approval.
    """
    if not fields:
        return None
    try:
        decoded = {_text(key): _text(value) for key, value in fields.items()}
        request = ApprovalRequest.model_validate_json(decoded["request"])
        if "message_ts" in decoded:
            request = request.model_copy(update={"message_ts": decoded["message_ts"]})
        decision = Decision.model_validate_json(decoded["decision"]) if "decision" in decoded else None
        discussion = tuple(DiscussionEntry.model_validate_json(reply) for reply in replies)
        copies = {
            name.removeprefix("copy:"): _channel_and_ts(value)
            for name, value in decoded.items()
            if name.startswith("copy:")
        }
        claimed_until = int(decoded["claimed_until_ms"]) if "claimed_until_ms" in decoded else None
        level = int(decoded.get("level", "0"))
        version = int(decoded.get("version", "0"))
    except (KeyError, ValueError, ValidationError) as error:
        raise ApprovalDataError(f"approval_id=<{approval_id}> | stored approval is unreadable: {error}") from error
    return Approval(
        request,
        decision,
        discussion,
        frozenset(_text(vote) for vote in votes),
        decoded.get("claimed_by"),
        claimed_until,
        level,
        copies,
        version,
        decoded.get("post_entry"),
    )


def copy_value(channel: str, ts: str) -> str:
    """How a direct-message copy is recorded: ``channel|ts``."""
    return f"{channel}|{ts}"


def _channel_and_ts(value: str) -> tuple[str, str]:
    channel, _, ts = value.partition("|")
    return channel, ts


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
