"""Approval rounds in Redis: one approval per interrupt, the first valid decision wins.

A *round* is the set of interrupts an agent stopped on. Opening a round stores every approval
request, queues their Slack messages in the outbox and marks them open, in one transaction, so
a crash never loses a request. A decision is one Lua script: it refuses a second decision
(reporting the first), counts votes toward a quorum, records the decision, cancels the
request's schedule (reminders, escalation, expiry), queues the message update and the audit
record, and, when it closes the round's last open approval, queues the resume job. A resume
job is therefore queued exactly once per round.

This store is the one writer of an approval's records. What they read back as is
``bot.store.approvals.approval_record``; what the decide script is given and answers is
``bot.store.approvals.decide_call``.
"""

import json
import logging
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Final

import redis

from bot.domain.records import ApprovalRequest, Decision, DiscussionEntry
from bot.domain.status import Status
from bot.observe.tracing import TRACE_FIELD, current_traceparent, valid_traceparent
from bot.store import keys, scripts
from bot.store.approvals import approval_index
from bot.store.approvals.approval_listings import ApprovalListings
from bot.store.approvals.approval_record import (
    READS,
    Approval,
    ApprovalDataError,
    approval_from,
    copy_value,
    queue_reads,
    stored_request,
)
from bot.store.approvals.copy_listing import CopyListing
from bot.store.approvals.decide_call import Attempt, DecideResult, keys_and_args, terms
from bot.store.direct_script import DirectScript
from bot.store.queues.due import FencedWrites
from bot.store.scripts.decide import DECIDE, TOO_LATE
from state.text import as_text, shown

logger = logging.getLogger(__name__)

_QUARANTINE_WHY_MAX: Final = 500


class ApprovalStore(ApprovalListings):
    """Reads and writes approval rounds. Thread-safe (redis-py pools connections).

    Its listings (what waits, what was decided, per workspace, channel and person) are ``ApprovalListings``.
    """

    def __init__(self, client: redis.Redis, *, decision_replicas: int = 0) -> None:
        """Register the scripts; nothing is sent yet. ``decision_replicas``: replicas that must hold a decision."""
        self._client = client
        # A click waits for it: no pool on its path.
        self._decide = DirectScript(client, DECIDE.text, replicas=decision_replicas)
        self._reply_timeout_s: float | None = client.get_connection_kwargs().get("socket_timeout")
        self._claim = client.register_script(scripts.CLAIM_APPROVAL.text)
        self._index_open = client.register_script(scripts.INDEX_OPEN.text)
        self._drop_idle_channel = client.register_script(scripts.DROP_IDLE_CHANNEL.text)
        self._quarantine = client.register_script(scripts.QUARANTINE.text)

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
        shard = keys.shard_of(session_id)  # the round's indexes share the session's slot (Redis Cluster)
        reads = self._client.pipeline(transaction=False)
        reads.hmget(keys.round_(session_id), ["version", "approvals"])
        for approval_id in ids:
            reads.hexists(keys.approval(session_id, approval_id), "request")
        (current_version, current_ids), *stored = reads.execute()
        fresh = [request for request, exists in zip(requests, stored, strict=True) if not exists]
        traceparent = current_traceparent()
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
            # HSETNX: even a publisher racing this one cannot replace a stored request (or its terms).
            approval_key = keys.approval(session_id, request.approval_id)
            transaction.hsetnx(approval_key, "request", stored_request(request))
            transaction.hsetnx(approval_key, "terms", terms(request))
            if traceparent:  # the trace its decision continues (bot.observe.tracing)
                transaction.hsetnx(approval_key, TRACE_FIELD, traceparent)
            transaction.set(keys.approval_session(shard, request.approval_id), session_id)
            opened_ms = int(request.created_at.timestamp() * 1000)
            transaction.zadd(keys.open_index(shard), {request.approval_id: opened_ms})
            channel_index = keys.channel_open(shard, request.team_id, request.channel_id)
            transaction.zadd(channel_index, {request.approval_id: opened_ms})
            transaction.sadd(keys.open_channels(shard, request.team_id), request.channel_id)
            # Its workspace's and named approvers' entries, and which they are: the decide script removes exactly those.
            members = approval_index.open_members(request)
            transaction.zadd(keys.open_by(shard), dict.fromkeys(members, 0))
            transaction.hsetnx(approval_key, approval_index.OPEN_FIELD, approval_index.open_record(request))
        if fresh:
            transaction.sadd(keys.open_approvals(session_id), *[request.approval_id for request in fresh])
        if own:
            transaction.execute()
        return fresh

    def traceparent_of(self, session_id: str, approval_id: str) -> str:
        """The trace of the run that raised the approval ("" when none was recorded)."""
        stored = self._client.hget(keys.approval(session_id, approval_id), TRACE_FIELD)
        return valid_traceparent(shown(stored)) if stored is not None else ""  # telemetry: a bad one is none

    def session_of(self, approval_id: str) -> str | None:
        """The session an approval belongs to, or ``None`` for an unknown id.

        An id names its shard (``keys.approval_id``): one read. One that does not (minted before
        shards, or made up) is looked up in every shard, in one pipeline.
        """
        shard = keys.approval_shard(approval_id)
        if shard is not None:
            value = self._client.get(keys.approval_session(shard, approval_id))
            return as_text(value) if value is not None else None
        reads = self._client.pipeline(transaction=False)
        for each in keys.shards():
            reads.get(keys.approval_session(each, approval_id))
        found = [as_text(value) for value in reads.execute() if value is not None]
        return found[0] if found else None

    def sessions_of(self, approval_ids: Sequence[str]) -> list[str | None]:
        """``session_of`` of many approvals, in their order: one round trip for ids that name their shard."""
        reads = self._client.pipeline(transaction=False)
        located = [(approval_id, keys.approval_shard(approval_id)) for approval_id in approval_ids]
        for approval_id, shard in located:
            if shard is not None:
                reads.get(keys.approval_session(shard, approval_id))
        found = iter(reads.execute() if len(reads) else [])
        sessions: list[str | None] = []
        for approval_id, shard in located:
            if shard is None:
                sessions.append(self.session_of(approval_id))
                continue
            value = next(found)
            sessions.append(as_text(value) if value is not None else None)
        return sessions

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
        queue_reads(pipeline, session_id, approval_id)
        return approval_from(approval_id, *pipeline.execute())

    def get_many_readable(self, ids: Sequence[tuple[str, str]]) -> list[Approval | None]:
        """``get_readable`` of many ``(session_id, approval_id)`` pairs in one round trip, in their order."""
        pipeline = self._client.pipeline(transaction=False)
        for session_id, approval_id in ids:
            queue_reads(pipeline, session_id, approval_id)
        replies = pipeline.execute()
        approvals: list[Approval | None] = []
        for index, (session_id, approval_id) in enumerate(ids):
            try:
                approvals.append(approval_from(approval_id, *replies[READS * index : READS * index + READS]))
            except ApprovalDataError as error:
                self.quarantine(session_id, approval_id, why=str(error))
                approvals.append(None)
        return approvals

    def find_readable(self, approval_id: str) -> Approval | None:
        """``find`` for readers that list many approvals: an unreadable one is quarantined and skipped (``None``)."""
        session_id = self.session_of(approval_id)
        return self.get_readable(session_id, approval_id) if session_id is not None else None

    def get_readable(self, session_id: str, approval_id: str) -> Approval | None:
        """``get``, except that an unreadable approval is quarantined and ``None`` returned.

        One bad record never stops a reader (App Home, ``/approvals``, ``pending``, delivery) from serving the others.
        """
        try:
            return self.get(session_id, approval_id)
        except ApprovalDataError as error:
            self.quarantine(session_id, approval_id, why=str(error))
            return None

    def quarantine(self, session_id: str, approval_id: str, *, why: str) -> None:
        """Take an unreadable approval out of what waits and record why, for operators (``python -m bot pending``).

        Out of the open index and of its open-by entries (App Home's pages and the pending gauges no longer count it).
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
        shard = keys.shard_of(session_id)
        self._quarantine(
            keys=scripts.QUARANTINE.key_list(
                approval_key=keys.approval(session_id, approval_id),
                open_key=keys.open_index(shard),
                open_by_key=keys.open_by(shard),
                notes_key=keys.quarantine(shard),
            ),
            args=scripts.QUARANTINE.arg_list(approval_id=approval_id, note=json.dumps(note)),
        )

    def quarantined(self) -> dict[str, dict[str, str]]:
        """Quarantined approvals: id -> ``{"session_id", "why", "at_ms"}``."""
        found: dict[str, dict[str, str]] = {}
        for shard in keys.shards():
            notes = self._client.hgetall(keys.quarantine(shard))
            found.update({as_text(key): json.loads(value) for key, value in notes.items()})
        return found

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
            decoded = {as_text(key): as_text(value) for key, value in fields.items()}
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

    def expire_round(
        self, pipeline: redis.client.Pipeline, session_id: str, *, after_s: int, round_record: bool = False
    ) -> None:
        """Let the current round's records expire ``after_s`` from now (inside the caller's transaction).

        Called once its outcome is published: the round's approvals stay readable (App Home,
        late clicks answered "already decided") for the retention period, then go. ``round_record``:
        the round's own record too (a session that opens no later round).
        """
        if round_record:
            pipeline.expire(keys.round_(session_id), after_s)
        raw = self._client.hget(keys.round_(session_id), "approvals")
        for approval_id in json.loads(raw) if raw else []:
            for key in (
                keys.approval(session_id, approval_id),
                keys.discussion(session_id, approval_id),
                keys.votes(session_id, approval_id),
                keys.approval_edit(session_id, approval_id),
                keys.approval_session(keys.shard_of(session_id), approval_id),
            ):
                pipeline.expire(key, after_s)

    def round_marks(self, session_id: str) -> tuple[int, int]:
        """The session's round: the version it was opened at and the last version published (0: none)."""
        opened, published = self._client.hmget(keys.round_(session_id), ["version", "published"])
        return int(opened or 0), int(published or 0)

    @staticmethod
    def mark_published(
        transaction: redis.client.Pipeline, session_id: str, version: int, *, expire_after_s: int | None
    ) -> None:
        """Record ``version`` as published (inside the publish transaction).

        ``expire_after_s``: ``None`` while approvals wait (the round record must not expire), else how long
        the finished round stays readable.
        """
        transaction.hset(keys.round_(session_id), "published", version)
        if expire_after_s is None:
            transaction.persist(keys.round_(session_id))
        else:
            transaction.expire(keys.round_(session_id), expire_after_s)

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

    @staticmethod
    def copy_listing(request: ApprovalRequest, *, user: str) -> CopyListing:
        """Where ``copy_record`` lists the copy for ``user`` while the approval waits (their App Home reads it)."""
        return CopyListing(
            keys.open_by(keys.shard_of(request.session_id)),
            approval_index.copy(request.team_id, user),
            request.approval_id,
        )

    def set_level(self, session_id: str, approval_id: str, level: int, *, target: FencedWrites | None = None) -> None:
        """Record how far up the escalation ladder the request went (through ``target``: with the caller's writes)."""
        (target or self._client).hset(keys.approval(session_id, approval_id), "level", level)

    def open_ids(self, session_id: str) -> set[str]:
        """Approval ids of the session still waiting for a decision."""
        return {as_text(member) for member in self._client.smembers(keys.open_approvals(session_id))}

    def add_discussion(self, session_id: str, approval_id: str, entry: DiscussionEntry) -> None:
        """Keep a thread reply with the approval; it travels with the decision."""
        self._client.rpush(keys.discussion(session_id, approval_id), entry.model_dump_json())

    def decide(
        self,
        attempt: Attempt,
        *,
        decision: Decision | None = None,
        update: scripts.ScriptRecord = (),
        audit: tuple[scripts.ScriptRecord, ...] = (),
    ) -> DecideResult:
        """Judge ``attempt`` and count its vote or record its decision, in one atomic step (one round trip).

        Args:
            attempt: Who, what and from where (the script checks the request's place and policy). A check
                (``attempt.check``) is judged only: nothing is written, and it takes none of the records below.
            decision: The record written if this attempt decides (its approvers and discussion are filled in).
            update: The message update, as ``Outbox.script_entry`` made it.
            audit: The audit events of a vote and of a decision (in that order), as ``Audit.script_events`` made them.

        Raises:
            redis.TimeoutError: The script ran after this call would have stopped waiting for it (nothing written).
        """
        # A server that stops answering may run the script after the caller gave up and told the person nothing
        # was recorded: past the reply timeout, the script writes nothing (Redis' clock against ours, both real).
        answer_by_ms = int((time.time() + self._reply_timeout_s) * 1000) if self._reply_timeout_s else 0
        request_keys, args = keys_and_args(
            attempt, decision=decision, update=update, audit=audit, answer_by_ms=answer_by_ms
        )
        reply = self._decide(keys=request_keys, args=args)
        if as_text(reply[0]) == TOO_LATE:
            raise redis.TimeoutError("the decision reached Redis after its caller stopped waiting: nothing recorded")
        return DecideResult.from_reply(attempt, reply)

    def read_and_check(self, checks: Sequence[Attempt]) -> list[tuple[Approval | None, DecideResult]]:
        """Each check's approval, read, and the decide script's judgement of it, all in one round trip.

        ``checks`` are check-only attempts (``Attempt.check``: nothing is written). An answer of ``needs`` is the
        caller's to supply (``bot.flow.judge``).

        Raises:
            ApprovalDataError: An approval cannot be read back.
        """
        pipeline = self._client.pipeline(transaction=False)
        for attempt in checks:
            if not attempt.check:
                raise ValueError(f"approval_id=<{attempt.approval_id}> | only a check is read with its approval")
            queue_reads(pipeline, attempt.session_id, attempt.approval_id)
            request_keys, args = keys_and_args(attempt)
            self._decide.queue(pipeline, keys=request_keys, args=args)
        replies = pipeline.execute(raise_on_error=False)
        found: list[tuple[Approval | None, DecideResult]] = []
        for index, attempt in enumerate(checks):
            *reads, judged = replies[(READS + 1) * index : (READS + 1) * (index + 1)]
            if isinstance(judged, redis.exceptions.NoScriptError):  # a restarted server: run alone, which loads it
                request_keys, args = keys_and_args(attempt)
                judged = self._decide(keys=request_keys, args=args)
            for reply in (*reads, judged):
                if isinstance(reply, Exception):
                    raise reply
            found.append((approval_from(attempt.approval_id, *reads), DecideResult.from_reply(attempt, judged)))
        return found

    def check_many(self, checks: Sequence[Attempt]) -> list[DecideResult]:
        """The decide script's judgement of each check (``Attempt.check``: nothing written), all in one round trip.

        For a caller that read the approvals already (App Home's candidates, the viewers of a change): nothing is read
        again. An answer of ``needs`` is the caller's to supply (``bot.flow.judge``).
        """
        pipeline = self._client.pipeline(transaction=False)
        for attempt in checks:
            if not attempt.check:
                raise ValueError(f"approval_id=<{attempt.approval_id}> | only a check is judged in a batch")
            request_keys, args = keys_and_args(attempt)
            self._decide.queue(pipeline, keys=request_keys, args=args)
        replies = pipeline.execute(raise_on_error=False) if checks else []
        judged: list[DecideResult] = []
        for attempt, queued in zip(checks, replies, strict=True):
            reply = queued
            if isinstance(reply, redis.exceptions.NoScriptError):  # a restarted server: run alone, which loads it
                request_keys, args = keys_and_args(attempt)
                reply = self._decide(keys=request_keys, args=args)
            if isinstance(reply, Exception):
                raise reply
            judged.append(DecideResult.from_reply(attempt, reply))
        return judged

    def decide_in(
        self,
        pipeline: redis.client.Pipeline,
        attempt: Attempt,
        *,
        decision: Decision,
        update: scripts.ScriptRecord,
        audit: tuple[scripts.ScriptRecord, ...],
        answer_by_ms: int = 0,
    ) -> None:
        """``decide``, queued in the caller's transaction after what it writes (a round that decides by itself).

        Sent as EVAL, not EVALSHA: inside MULTI a script the server does not hold yet would fail alone while the
        rest of the transaction is applied. ``attempt`` must need nothing more (no checks, its place given).
        ``answer_by_ms``: Redis' time (ms) after which it decides nothing (0: whenever).
        """
        request_keys, args = keys_and_args(
            attempt, decision=decision, update=update, audit=audit, answer_by_ms=answer_by_ms
        )
        # As a raw command: ClusterPipeline.eval takes no keys (it finds the slot from the command's own keys).
        pipeline.execute_command("EVAL", DECIDE.text, len(request_keys), *request_keys, *args)  # type: ignore[no-untyped-call]

    def claim(self, approval: Approval, *, user: str, until: datetime) -> Status:
        """Record a claim and push the next escalation past it: ``claimed``, ``already`` or ``unknown``."""
        request = approval.request
        claim = scripts.CLAIM_APPROVAL
        result = self._claim(
            keys=claim.key_list(
                approval_key=keys.approval(request.session_id, request.approval_id),
                due_key=keys.schedule_due(keys.shard_of(request.session_id)),
            ),
            args=claim.arg_list(
                user=user,
                until_ms=int(until.timestamp() * 1000),
                entry_id=keys.schedule_entry(request.approval_id, "escalate"),
            ),
        )
        return Status(as_text(result))
