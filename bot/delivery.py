"""Sends outbox entries to Slack, one sender per entry kind.

Errors decide what happens next: a 429 waits for ``Retry-After``; a server or network error
backs off exponentially; a permanent error (the channel is gone, the token revoked) is parked
in a dead-letter hash with its error after a few attempts, so an operator can see it.
"""

import json
import logging
from collections.abc import Callable
from typing import Any, Final

import redis
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import blocks
from bot.approvals import ApprovalStore
from bot.outbox import Outbox, OutboxEntry, backoff_s

logger = logging.getLogger(__name__)

DEAD_LETTERS: Final = "signoff:outbox:dead"
_PERMANENT_ATTEMPTS: Final = 5
_NOT_READY_DELAY_S: Final = 1.0


class NotReady(Exception):
    """The entry depends on another one not delivered yet (an update before its post)."""


class Deliverer:
    """Delivers claimed outbox entries through the Web API."""

    def __init__(self, *, client: WebClient, approvals: ApprovalStore, outbox: Outbox, redis_client: redis.Redis):
        """Keep the collaborators."""
        self._slack = client
        self._approvals = approvals
        self._outbox = outbox
        self._redis = redis_client
        self._senders: dict[str, Callable[[dict[str, Any]], None]] = {
            "post_approval": self._post_approval,
            "update_approval": self._update_approval,
            "post_message": self._post_message,
            "post_ephemeral": self._post_ephemeral,
        }

    def deliver_due(self, *, limit: int = 20) -> int:
        """Send what is due now; return how many entries were handled."""
        entries = self._outbox.claim(limit=limit)
        for entry in entries:
            self.deliver(entry)
        return len(entries)

    def deliver(self, entry: OutboxEntry) -> None:
        """Send one entry, then complete or reschedule it."""
        sender = self._senders.get(entry.kind)
        if sender is None:
            self._park(entry, f"unknown kind {entry.kind!r}")
            return
        try:
            sender(entry.payload)
        except NotReady:
            self._outbox.reschedule(entry, delay_s=_NOT_READY_DELAY_S)
        except SlackApiError as error:
            self._failed(entry, error)
        except (OSError, TimeoutError) as error:  # network trouble: try again later
            logger.warning("entry=<%s>, kind=<%s> | network error: %s", entry.entry_id, entry.kind, error)
            self._outbox.reschedule(entry, delay_s=backoff_s(entry.attempts + 1))
        else:
            self._outbox.complete(entry)

    def _failed(self, entry: OutboxEntry, error: SlackApiError) -> None:
        status = error.response.status_code
        code = error.response.get("error") if isinstance(error.response.data, dict) else None
        if status == 429:
            retry_after = float(error.response.headers.get("Retry-After", error.response.headers.get("retry-after", 1)))
            logger.info("entry=<%s> | rate limited, retrying in %.0fs", entry.entry_id, retry_after)
            self._outbox.reschedule(entry, delay_s=retry_after)
        elif status >= 500 or entry.attempts + 1 < _PERMANENT_ATTEMPTS:
            logger.warning(
                "entry=<%s>, status=<%s>, error=<%s> | Slack refused, retrying", entry.entry_id, status, code
            )
            self._outbox.reschedule(entry, delay_s=backoff_s(entry.attempts + 1))
        else:
            self._park(entry, f"status {status}: {code}")

    def _park(self, entry: OutboxEntry, why: str) -> None:
        logger.error("entry=<%s>, kind=<%s> | undeliverable, parked: %s", entry.entry_id, entry.kind, why)
        self._redis.hset(DEAD_LETTERS, entry.entry_id, json.dumps({"entry": json.loads(entry.to_json()), "why": why}))
        self._outbox.complete(entry)

    def _post_approval(self, payload: dict[str, Any]) -> None:
        approval = self._approvals.get(payload["session_id"], payload["approval_id"])
        if approval is None or approval.request.message_ts:
            return  # gone, or posted by an earlier attempt
        request = approval.request
        message = blocks.approval_message(request, decision=approval.decision)
        response = self._slack.chat_postMessage(channel=request.channel_id, thread_ts=request.thread_ts, **message)
        self._approvals.set_message_ts(request.session_id, request.approval_id, str(response["ts"]))

    def _update_approval(self, payload: dict[str, Any]) -> None:
        approval = self._approvals.get(payload["session_id"], payload["approval_id"])
        if approval is None:
            return
        request = approval.request
        if not request.message_ts:
            raise NotReady
        message = blocks.approval_message(request, decision=approval.decision)
        self._slack.chat_update(channel=request.channel_id, ts=request.message_ts, **message)

    def _post_message(self, payload: dict[str, Any]) -> None:
        self._slack.chat_postMessage(**payload)

    def _post_ephemeral(self, payload: dict[str, Any]) -> None:
        self._slack.chat_postEphemeral(**payload)
