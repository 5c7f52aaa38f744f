"""Sends outbox entries to Slack, one sender per entry kind.

Errors decide what happens next: a 429 is no failed attempt, it waits for ``Retry-After`` and pauses what Slack limits
(``bot.slack.outbound.rate_limits``); a server or network error backs off exponentially, jittered, capped at
``bot.store.queues.outbox.BACKOFF_CAP_S``; a permanent error (the channel is gone, the token revoked) is parked in a
dead-letter hash with its error after a few attempts, so an operator can see it.

Each entry is sent with the token of its workspace (``SlackClients``): the approval's team for an approval's
messages, the entry's team for the rest. An entry for a workspace the app is no longer installed in is dropped
at once (``signoff_outbox_dropped_total``): no token can send it, nobody there could read it.

What Slack shows must match what is stored, whatever fails:

- A post is made once. Each carries a marker (``bot.slack.outbound.posted_copies``); an attempt that follows
  one which may have posted looks for its copies first, adopts one and deletes the others, and
  the copy kept is recorded in the same step that completes the entry (``complete_post``). So
  no copy the bot lost track of keeps live buttons, and no answer shows twice.
- Entries for one conversation are sent in the order they were queued, different conversations in
  parallel (``concurrency`` threads, each with its own kept-alive connection when the client is a
  ``KeepAliveWebClient``). A batch is split into lanes (``bot.slack.outbound.lanes``), each in queued order;
  a delivery sends to a lane only while it holds the lane's lease (``bot.store.queues.lane_leases``), so
  two threads or processes never send to one conversation at once. When an attempt fails (a 429,
  an error), the rest of its lane waits behind it, in this batch and in later ones (the lane is
  held for that entry): a retry never lets a later message of the conversation overtake, and the
  other lanes go on.
- Updates of an approval's messages apply in order. Each queued update bumps the approval's
  version; one delivery at a time (a lease, ``bot.store.approvals.message_updates``) renders the current state and
  records the version shown, and skips when the messages already show it. A delivery that lost its lease
  half way (a stall) was maybe overtaken, so it shows the current state again.
"""

import functools
import logging
import random
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final

from opentelemetry.trace import SpanKind
from redis import Redis, RedisError
from slack_sdk.errors import SlackApiError

from bot.domain.call_errors import SLACK_CALL_ERRORS
from bot.domain.errors import SignoffError
from bot.domain.records import ApprovalRequest
from bot.domain.workspaces import NotInstalled, SlackClients
from bot.flow.home_queue import HomeQueue
from bot.observe import metrics, tracing
from bot.render.questions import request_message
from bot.render.texts import thread_posts
from bot.slack.outbound.home_tabs import HomeTabs
from bot.slack.outbound.lane_runs import LaneRuns
from bot.slack.outbound.lanes import lanes
from bot.slack.outbound.post_once import post_once
from bot.slack.outbound.posted_copies import PostedCopy, marker
from bot.slack.outbound.rate_limits import Jitter, SlackPauses
from bot.slack.outbound.retry_after import retry_after_s
from bot.store.approvals.approval_record import Approval, copy_value
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.message_updates import MessageUpdates
from bot.store.queues.lane_leases import LaneLeases
from bot.store.queues.outbox import AFTER, Outbox, OutboxEntry, OutboxKind, update_approval

logger = logging.getLogger(__name__)

_PERMANENT_ATTEMPTS: Final = 5
_TOKEN_GONE: Final = frozenset({"invalid_auth", "token_revoked", "account_inactive", "not_authed"})
_UPDATE_LEASE_MS: Final = 10_000
_OVERTAKEN_RETRIES: Final = 3


class NotReady(SignoffError):
    """Not the entry's turn yet (an update before its post, a part before the one ahead of it).

    It comes back later without counting a failed attempt, so a post raises it only before sending.
    """

    delay_s = 1.0


class Busy(NotReady):
    """Another delivery is updating the same messages; this one comes back shortly (and may find nothing to do)."""

    delay_s = 0.2


@dataclass(frozen=True)
class PutBack:
    """An entry that went back to the outbox, to be tried again after ``delay_s``.

    ``failed``: an attempt failed, so the rest of its conversation waits for it; else it only was
    not its turn (it waits for another entry, which must not wait for it).
    """

    delay_s: float
    failed: bool


_LANE_POLL_S: Final = 1.0  # a lane held for an entry put back is looked at again at least this often
# A lane another delivery is sending to frees within milliseconds (its lease only guards against a dead
# holder): waiting the lease, or even the poll above, serialized every busy channel behind it.
_LANE_BUSY_S: Final = 0.01


class Deliverer:
    """Delivers claimed outbox entries through the Web API."""

    def __init__(
        self,
        *,
        clients: SlackClients,
        outbox: Outbox,
        approvals: ApprovalStore,
        redis: Redis,
        home_queue: HomeQueue | None = None,
        updates: MessageUpdates | None = None,
        lease_s: float = 30,
        concurrency: int = 1,
        jitter: random.Random | None = None,
        home_refresh_s: float = 2.0,
    ):
        """Keep the collaborators; ``clients`` give each workspace's client, ``home_queue`` fills App Home tabs.

        ``redis``: the client the message updates and the lanes' leases are kept on.
        ``lease_s``: how long a claimed entry is ours before another dispatcher may send it.
        ``concurrency``: how many lanes (conversations) are delivered at once.
        ``jitter``: draws the random part of each wait (seeded by tests).
        ``home_refresh_s``: at most one App Home rebuild per person in this window (``HOME_REFRESH_SECONDS``).
        """
        self._clients, self._outbox, self._approvals = clients, outbox, approvals
        self._homes = (
            HomeTabs(home_queue=home_queue, clients=clients, outbox=outbox, cooling_s=home_refresh_s)
            if home_queue is not None
            else None
        )
        self._updates = updates or MessageUpdates(redis)
        self._lease_s = lease_s
        self._concurrency = concurrency
        self._runs = LaneRuns(concurrency)
        self._lanes = LaneLeases(redis, lease_s=lease_s, now_ms=outbox.now_ms)
        self._jitter = Jitter(jitter or random.Random())
        self._pauses = SlackPauses(self._lanes, now_ms=outbox.now_ms)
        self._senders: dict[str, Callable[[OutboxEntry], bool | None]] = {  # True: it settled the entry itself
            OutboxKind.POST_APPROVAL: self._post_approval,
            OutboxKind.POST_APPROVAL_COPY: self._post_approval_copy,
            OutboxKind.UPDATE_APPROVAL: self._update_approval,
            OutboxKind.POST_MESSAGE: self._post_message,
            OutboxKind.POST_ANSWER: self._post_answer,
            OutboxKind.POST_EPHEMERAL: self._post_ephemeral,
            OutboxKind.PUBLISH_HOME: self._publish_home,
        }

    def deliver_due(self, *, limit: int = 20) -> int:
        """Send what is due now, conversations in parallel; return how many entries were handled."""
        entries = self._outbox.claim(lease_s=self._lease_s, limit=limit)
        if entries:
            self._pauses.learn(entries)
        batch = lanes(entries)
        token, waits, paused = self._lanes.take([(lane, queued[0].entry_id) for lane, queued in batch])
        ready: list[tuple[str, list[OutboxEntry]]] = []
        for (lane, queued), held_s, for_pause in zip(batch, waits, paused, strict=True):
            if held_s is None:
                ready.append((lane, queued))
                continue
            wait_s = _LANE_BUSY_S if held_s == 0 else min(max(held_s, 0.05), _LANE_POLL_S)
            if for_pause:  # the channel's lanes wait for one moment (its pause's end, its pace's next slot): spread
                wait_s = self._jitter.spread(wait_s)
            for entry in queued:  # another delivery has the conversation, or it waits for an earlier entry
                self._outbox.postpone(entry, delay_s=wait_s)
        if self._concurrency > 1 and ready:
            ended = self._runs.run(
                [functools.partial(self._deliver_lane, queued) for _lane, queued in ready],
                finish_late=lambda index, late: self._leave_late(token, ready[index][0], late),
            )
        else:
            ended = {}
            for index, (_lane, queued) in enumerate(ready):
                try:
                    ended[index] = self._deliver_lane(queued)
                except Exception as error:  # boundary: kept like a pool future's, raised once the lanes are left
                    ended[index] = error
        # A lane whose delivery broke off keeps its lease until it runs out, as its unsent entries keep theirs.
        left = [(ready[at][0], outcome) for at, outcome in ended.items() if not isinstance(outcome, BaseException)]
        self._lanes.leave(token, [_leaving(lane, outcome) for lane, outcome in left])
        for outcome in ended.values():
            if isinstance(outcome, BaseException):
                raise outcome
        return len(entries)

    def idle_wait_s(self, longest_s: float) -> float:
        """How long a dispatcher with nothing due may wait for new entries.

        At most ``longest_s``, and no longer than until the soonest queued entry is due. A new entry wakes the
        dispatcher; one put back for later (a busy conversation, a retry, a part waiting for the one before it) does
        not: its due time is the limit.
        """
        soonest = self._outbox.next_due_s()
        return longest_s if soonest is None else min(longest_s, soonest)

    def settle(self) -> bool:
        """Wait until the conversations an earlier batch left running are delivered; whether there were any."""
        return self._runs.settle()

    def wait_for_work(self, longest_s: float) -> None:
        """Wait for a new entry, for at most ``idle_wait_s(longest_s)`` (a dispatcher with nothing due)."""
        self._outbox.wait_for_work(self.idle_wait_s(longest_s))

    def close(self) -> None:
        """Stop the lane threads (after the lanes running)."""
        self._runs.close()

    def _leave_late(self, token: str, lane: str, late: "Future[tuple[str, float] | None]") -> None:
        """A lane that ended after its batch went on leaves now (one broken off keeps its lane until its lease ends)."""
        error = late.exception()
        if error is not None:
            logger.error("lane=<%s> | delivery broke off: %s", lane, error, exc_info=error)
            return
        try:
            self._lanes.leave(token, [_leaving(lane, late.result())])
        except RedisError as trouble:  # its lease runs out instead
            logger.warning("lane=<%s> | not left: %s", lane, trouble)

    def _deliver_lane(self, lane: Sequence[OutboxEntry]) -> tuple[str, float] | None:
        """Deliver one conversation's entries in order; once one is put back, the rest wait behind it.

        Returns:
            The entry whose failed attempt the conversation now waits for, and its delay; else ``None``.
        """
        for index, entry in enumerate(lane):
            paused_s = self._pauses.paused_s(entry)  # > 0: Slack asked for no such call now, nothing is sent
            put_back = PutBack(self._jitter.spread(paused_s), failed=False) if paused_s > 0 else self.deliver(entry)
            if put_back is not None:
                for later in lane[index + (0 if paused_s > 0 else 1) :]:
                    self._outbox.postpone(later, delay_s=put_back.delay_s)  # nothing of it was sent
                return (entry.entry_id, put_back.delay_s) if put_back.failed else None
        return None

    def deliver(self, entry: OutboxEntry) -> PutBack | None:
        """Send one entry, then complete or reschedule it, in a span continuing the trace that queued it.

        Returns:
            ``None`` when the entry is done with (delivered, or parked), else how it went back to the outbox.
        """
        kind = tracing.name_part(entry.kind, OutboxKind)  # stored data: never a span's name as it is
        attributes: tracing.Attributes = {"signoff.outbox.kind": kind, "signoff.outbox.attempts": entry.attempts}
        with tracing.span(
            f"outbox {kind}", parent=entry.traceparent, kind=SpanKind.CLIENT, attributes=attributes
        ) as span:
            put_back = self._deliver(entry)
            if put_back is not None and put_back.failed:
                tracing.failed(span, "not delivered: rescheduled")
            return put_back

    def _deliver(self, entry: OutboxEntry) -> PutBack | None:
        sender = self._senders.get(entry.kind)
        if sender is None:
            self._park(entry, f"unknown kind {entry.kind!r}")
            return None
        try:
            settled = sender(entry)
        except NotInstalled as error:  # no token can send it, now or later: nobody there could read it
            logger.warning("entry=<%s>, kind=<%s> | dropped: %s", entry.entry_id, entry.kind, error)
            self._outbox.complete(entry)
            metrics.OUTBOX_DROPPED.labels(reason="not_installed").inc()
            tracing.current_failed("dropped: the app is not installed", error)
            return None
        except NotReady as wait:  # not a failed attempt: nothing was sent
            self._outbox.postpone(entry, delay_s=wait.delay_s)
            return PutBack(wait.delay_s, failed=False)
        except SlackApiError as error:
            return self._failed(entry, error)
        except (OSError, TimeoutError) as error:  # network trouble: try again later
            logger.warning("entry=<%s>, kind=<%s> | network error: %s", entry.entry_id, entry.kind, error)
            return self._again(entry, delay_s=self._jitter.backoff_s(entry.attempts + 1), reason="network")
        except Exception as error:  # boundary: a bug or bad data: count it, and park it rather than retry forever
            logger.exception("entry=<%s>, kind=<%s> | delivery failed", entry.entry_id, entry.kind)
            if entry.attempts + 1 >= _PERMANENT_ATTEMPTS:
                self._park(entry, f"{type(error).__name__}: {error}")
                return None
            return self._again(entry, delay_s=self._jitter.backoff_s(entry.attempts + 1), reason="failure")
        if not settled:
            self._outbox.complete(entry)
        return None

    def _again(self, entry: OutboxEntry, *, delay_s: float, reason: str, counted: bool = True) -> PutBack:
        self._outbox.reschedule(entry, delay_s=delay_s, counted=counted)
        metrics.OUTBOX_RETRIES.labels(reason=reason).inc()
        return PutBack(delay_s, failed=True)

    def _failed(self, entry: OutboxEntry, error: SlackApiError) -> PutBack | None:
        status = error.response.status_code
        code = error.response.get("error") if isinstance(error.response.data, dict) else None
        if code in _TOKEN_GONE and entry.team_id:
            self._clients.forget(entry.team_id)  # the next attempt reads the installation anew
        if status == 429:  # not processed: not a failed attempt, only a wait Slack asked for
            retry_after = retry_after_s(error.response.headers, now_s=self._outbox.now_ms() / 1000)
            method = self._pauses.rate_limited(entry, error, retry_after)
            logger.info("entry=<%s>, method=<%s> | rate limited, waiting %.0fs", entry.entry_id, method, retry_after)
            return self._again(entry, delay_s=retry_after, reason="rate_limited", counted=False)
        if status >= 500 or entry.attempts + 1 < _PERMANENT_ATTEMPTS:
            logger.warning(
                "entry=<%s>, status=<%s>, error=<%s> | Slack refused, retrying", entry.entry_id, status, code
            )
            return self._again(entry, delay_s=self._jitter.backoff_s(entry.attempts + 1), reason="slack_error")
        self._park(entry, f"status {status}: {code}")
        return None

    def _park(self, entry: OutboxEntry, why: str) -> None:
        logger.error("entry=<%s>, kind=<%s> | undeliverable, parked: %s", entry.entry_id, entry.kind, why)
        self._outbox.park(entry, why=why)
        tracing.current_failed(f"parked: {why}")
        metrics.OUTBOX_PARKED.labels(kind=entry.kind if entry.kind in set(OutboxKind) else "other").inc()

    def _post_approval(self, entry: OutboxEntry) -> None:
        approval = self._approvals.get_readable(entry.payload["session_id"], entry.payload["approval_id"])
        if approval is None:
            return
        request = approval.request
        if request.message_ts and not entry.may_have_been_sent:
            return  # posted and recorded by an earlier attempt
        known = PostedCopy(request.channel_id, request.message_ts, 0) if request.message_ts else None
        kept = post_once(
            self._outbox,
            entry,
            slack=self._clients.for_team(request.team_id),
            channel=request.channel_id,
            thread_ts=request.thread_ts or None,  # "" for a request the API posted outside any thread
            message=_message_of(approval),
            version=approval.version,
            known=known,
            identify=lambda copy: copy.ts,
            record=lambda copy: self._approvals.message_record(request, ts=copy.ts, entry_id=entry.entry_id),
        )
        if kept is not None:
            if self._homes is not None:
                self._homes.rebuild_for(approval)
            if kept.version < approval.version:  # a copy an earlier attempt posted before the latest change
                self._outbox.send_later(_update_of(request))

    def _post_approval_copy(self, entry: OutboxEntry) -> None:
        approval = self._approvals.get_readable(entry.payload["session_id"], entry.payload["approval_id"])
        user = entry.payload["user"]
        if approval is None:
            return
        known = PostedCopy(*approval.copies[user], 0) if user in approval.copies else None
        if known is not None and not entry.may_have_been_sent:
            return
        request = approval.request
        kept = post_once(
            self._outbox,
            entry,
            slack=self._clients.for_team(request.team_id),
            channel=user,
            thread_ts=None,
            message=_message_of(approval),
            version=approval.version,
            known=known,
            identify=lambda copy: copy_value(copy.channel, copy.ts),
            record=lambda copy: self._approvals.copy_record(request, user=user, channel=copy.channel, ts=copy.ts),
            post=approval.decision is None,  # decided meanwhile: no copy is needed, but one posted must be found
            listing=self._approvals.copy_listing(request, user=user),  # on their App Home while it waits
        )
        if kept is not None:
            latest = self._approvals.get_readable(request.session_id, request.approval_id)
            if latest is not None and latest.version > kept.version:  # changed while the copy was on its way
                # The original may show the latest already: forget that, so the update redoes every copy.
                self._updates.forget_shown(request.session_id, request.approval_id)
                self._outbox.send_later(_update_of(request))

    def _post_message(self, entry: OutboxEntry) -> None:
        message = dict(entry.payload)
        after = message.pop(AFTER, None)
        if after is not None and self._outbox.waits(str(after), shard=entry.shard):  # queued together: one shard
            raise NotReady  # the part before it is not delivered yet
        channel = str(message.pop("channel"))
        thread_ts = message.pop("thread_ts", None)
        post_once(
            self._outbox,
            entry,
            slack=self._clients.for_team(entry.team_id),
            channel=channel,
            thread_ts=str(thread_ts) if thread_ts else None,
            message=message,
            version=0,
            known=None,
            identify=lambda copy: copy.ts,
        )

    def _post_answer(self, entry: OutboxEntry) -> None:
        """Post a request's answer in its thread (the message's own, for a request posted outside any thread).

        Raises:
            NotReady: The request's message is not posted yet.
        """
        approval = self._approvals.get_readable(entry.payload["session_id"], entry.payload["approval_id"])
        if approval is None or approval.decision is None or approval.decision.decision != "answer":
            return  # gone (expired and let go): nothing to say
        request = approval.request
        if not request.message_ts:
            raise NotReady
        post_once(
            self._outbox,
            entry,
            slack=self._clients.for_team(request.team_id),
            channel=request.channel_id,
            thread_ts=request.thread_ts or request.message_ts,
            message={"text": thread_posts.answer_given(request, approval.decision)},
            version=0,
            known=None,
            identify=lambda copy: copy.ts,
        )

    def _update_approval(self, entry: OutboxEntry) -> None:
        self._show_latest(entry.payload["session_id"], entry.payload["approval_id"], force=False)

    def _show_latest(self, session_id: str, approval_id: str, *, force: bool) -> None:
        """Show the approval's current state on its messages, unless they show it already (``force``: anyway).

        Raises:
            Busy: Another delivery holds the update lease.
            NotReady: The message is not posted yet, or this delivery kept being overtaken.
        """
        for _attempt in range(_OVERTAKEN_RETRIES):
            token, shown = self._updates.lease(session_id, approval_id, lease_ms=_UPDATE_LEASE_MS)
            if token is None:
                raise Busy
            try:
                approval = self._approvals.get_readable(session_id, approval_id)
                if approval is None:
                    return
                if not approval.request.message_ts:
                    raise NotReady
                if not force and shown >= approval.version:
                    return
                self._apply(approval)
                if self._updates.shown_if_leased(session_id, approval_id, token=token, version=approval.version):
                    if self._homes is not None:
                        self._homes.rebuild_for(approval)
                    return
                force = True  # the lease ran out meanwhile: another delivery may have shown a later state first
            finally:
                self._updates.release(session_id, approval_id, token=token)
        raise NotReady

    def _apply(self, approval: Approval) -> None:
        request = approval.request
        assert request.message_ts is not None
        message = _message_of(approval)
        metadata = marker(approval.post_entry, version=approval.version) if approval.post_entry else None
        slack = self._clients.for_team(request.team_id)
        try:
            slack.chat_update(channel=request.channel_id, ts=request.message_ts, metadata=metadata, **message)
            for channel, ts in approval.copies.values():
                slack.chat_update(channel=channel, ts=ts, **message)
        except SLACK_CALL_ERRORS:
            # Slack may have applied it anyway, after a later one: whatever shows now is unknown.
            self._updates.forget_shown(request.session_id, request.approval_id)
            raise

    def _publish_home(self, entry: OutboxEntry) -> bool:
        return self._homes is not None and self._homes.publish(entry)

    def _post_ephemeral(self, entry: OutboxEntry) -> None:
        self._clients.for_team(entry.team_id).chat_postEphemeral(**entry.payload)


def _update_of(request: ApprovalRequest) -> OutboxEntry:
    return update_approval(request.session_id, request.approval_id)


def _message_of(approval: Approval) -> dict[str, Any]:
    return request_message(approval.request, decision=approval.decision, progress=approval.progress)


def _leaving(lane: str, outcome: tuple[str, float] | None) -> tuple[str, str | None, float]:
    """How ``lane`` is left after its delivery: held for the entry it put back (and that entry's delay), or freed."""
    return (lane, outcome[0], outcome[1]) if outcome is not None else (lane, None, 0.0)
