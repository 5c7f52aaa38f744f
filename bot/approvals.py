"""Approval rounds in Redis: one approval per interrupt, the first valid decision wins.

A *round* is the set of interrupts an agent stopped on. Opening a round stores every approval
request, queues their Slack messages in the outbox and marks them open, in one transaction, so
a crash never loses a request. A decision is one Lua script: it refuses a second decision
(reporting the first), records this one, and when it closes the round's last open approval it
queues the resume job, all atomically; a resume job is therefore queued exactly once per round.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import redis
from pydantic import ValidationError

from bot import keys
from bot.model import ApprovalRequest, Decision, DiscussionEntry
from bot.outbox import OutboxEntry

# KEYS: approval hash, open set, jobs stream, round hash, outbox due, outbox entries, outbox wake,
#       audit stream.
# ARGV: decision JSON, approval id, session id, outbox entry id, outbox entry JSON, now ms,
#       then the audit record's field/value pairs.
# Returns {"decided", "queued"|"waiting"}, {"already", <decision JSON>} or {"unknown", ""}.
# The message update and the audit record are written in the same step: a decision is never
# recorded half way.
_DECIDE: Final = """
if redis.call('HEXISTS', KEYS[1], 'request') == 0 then return {'unknown', ''} end
local previous = redis.call('HGET', KEYS[1], 'decision')
if previous then return {'already', previous} end
redis.call('HSET', KEYS[1], 'decision', ARGV[1])
redis.call('SREM', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[6], ARGV[4], ARGV[5])
redis.call('ZADD', KEYS[5], ARGV[6], ARGV[4])
redis.call('LPUSH', KEYS[7], '1')
redis.call('XADD', KEYS[8], 'MAXLEN', '~', '1000000', '*', unpack(ARGV, 7))
if redis.call('SCARD', KEYS[2]) == 0 then
  local version = redis.call('HGET', KEYS[4], 'version')
  redis.call('XADD', KEYS[3], '*', 'kind', 'resume', 'session_id', ARGV[3], 'version', version)
  return {'decided', 'queued'}
end
return {'decided', 'waiting'}
"""

DecisionStatus = Literal["decided", "already", "unknown"]


class ApprovalDataError(RuntimeError):
    """An approval stored in Redis cannot be read back (corrupted or foreign data)."""


@dataclass(frozen=True)
class DecideResult:
    """What a decision attempt did.

    Attributes:
        status: ``decided`` (this one won), ``already`` (an earlier one stands) or ``unknown``.
        decision: The decision that stands (``None`` if unknown).
        resume_queued: This decision closed the round and queued the resume job.
    """

    status: DecisionStatus
    decision: Decision | None
    resume_queued: bool = False


@dataclass(frozen=True)
class Approval:
    """An approval request, its decision (if any) and the thread replies collected for it."""

    request: ApprovalRequest
    decision: Decision | None
    discussion: tuple[DiscussionEntry, ...] = ()


class ApprovalStore:
    """Reads and writes approval rounds. Thread-safe (redis-py pools connections)."""

    def __init__(self, client: redis.Redis) -> None:
        """Register the decision script; nothing is sent yet."""
        self._client = client
        self._decide = client.register_script(_DECIDE)

    def open_round(
        self,
        *,
        session_id: str,
        version: int,
        requests: Sequence[ApprovalRequest],
        pipeline: redis.client.Pipeline | None = None,
    ) -> None:
        """Store a round's requests and mark them open (in the caller's transaction, if given).

        Args:
            session_id: The session that stopped.
            version: The session's version once stopped; the resume job carries it.
            requests: One request per interrupt.
            pipeline: A MULTI pipeline to join (the caller adds the outbox entries and executes).
        """
        own = pipeline is None
        transaction = self._client.pipeline(transaction=True) if pipeline is None else pipeline
        ids = [request.approval_id for request in requests]
        transaction.delete(keys.open_approvals(session_id))
        transaction.hset(keys.round_(session_id), mapping={"version": version, "approvals": json.dumps(ids)})
        for request in requests:
            transaction.hset(keys.approval(session_id, request.approval_id), "request", request.model_dump_json())
            transaction.hset(keys.APPROVAL_SESSION, request.approval_id, session_id)
        if ids:
            transaction.sadd(keys.open_approvals(session_id), *ids)
        if own:
            transaction.execute()

    def session_of(self, approval_id: str) -> str | None:
        """The session an approval belongs to, or ``None`` for an unknown id."""
        value = self._client.hget(keys.APPROVAL_SESSION, approval_id)
        return _text(value) if value is not None else None

    def get(self, session_id: str, approval_id: str) -> Approval | None:
        """Load one approval with its discussion (one round trip).

        Raises:
            ApprovalDataError: The stored data is not a valid approval.
        """
        pipeline = self._client.pipeline(transaction=False)
        pipeline.hgetall(keys.approval(session_id, approval_id))
        pipeline.lrange(keys.discussion(session_id, approval_id), 0, -1)
        fields, replies = pipeline.execute()
        if not fields:
            return None
        decoded = {_text(key): _text(value) for key, value in fields.items()}
        try:
            request = ApprovalRequest.model_validate_json(decoded["request"])
            if "message_ts" in decoded:
                request = request.model_copy(update={"message_ts": decoded["message_ts"]})
            decision = Decision.model_validate_json(decoded["decision"]) if "decision" in decoded else None
            discussion = tuple(DiscussionEntry.model_validate_json(reply) for reply in replies)
        except (KeyError, ValidationError) as error:
            raise ApprovalDataError(f"approval_id=<{approval_id}> | stored approval is unreadable: {error}") from error
        return Approval(request, decision, discussion)

    def round_approvals(self, session_id: str) -> tuple[int, list[Approval]]:
        """The current round's version and approvals, in the order they were raised."""
        fields = self._client.hgetall(keys.round_(session_id))
        if not fields:
            return 0, []
        decoded = {_text(key): _text(value) for key, value in fields.items()}
        approvals = []
        for approval_id in json.loads(decoded["approvals"]):
            approval = self.get(session_id, approval_id)
            if approval is not None:
                approvals.append(approval)
        return int(decoded["version"]), approvals

    def set_message_ts(self, session_id: str, approval_id: str, message_ts: str) -> None:
        """Remember where the approval message was posted (so it can be updated)."""
        self._client.hset(keys.approval(session_id, approval_id), "message_ts", message_ts)

    def open_ids(self, session_id: str) -> set[str]:
        """Approval ids of the session still waiting for a decision."""
        return {_text(member) for member in self._client.smembers(keys.open_approvals(session_id))}

    def add_discussion(self, session_id: str, approval_id: str, entry: DiscussionEntry) -> None:
        """Keep a thread reply with the approval; it travels with the decision."""
        self._client.rpush(keys.discussion(session_id, approval_id), entry.model_dump_json())

    def decide(
        self,
        session_id: str,
        approval_id: str,
        decision: Decision,
        *,
        update: OutboxEntry,
        audit: dict[str, str],
        now_ms: int,
    ) -> DecideResult:
        """Record ``decision`` unless another already stands.

        In the same atomic step: queue ``update`` (the message update) in the outbox, append
        ``audit`` to the audit stream, and queue the resume job if this decision closes the round.
        """
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
            ],
            args=[
                decision.model_dump_json(),
                approval_id,
                session_id,
                update.entry_id,
                update.to_json(),
                now_ms,
                *[item for pair in audit.items() for item in pair],
            ],
        )
        status, value = _text(status), _text(value)
        if status == "unknown":
            return DecideResult("unknown", None)
        if status == "already":
            return DecideResult("already", Decision.model_validate_json(value))
        return DecideResult("decided", decision, resume_queued=value == "queued")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
