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

from bot import blocks, keys
from bot.approvals import Approval, ApprovalStore
from bot.home import HomeTab, progress_of
from bot.outbox import Outbox, OutboxEntry, backoff_s, home_refresh

logger = logging.getLogger(__name__)

DEAD_LETTERS: Final = "signoff:outbox:dead"
_PERMANENT_ATTEMPTS: Final = 5
_NOT_READY_DELAY_S: Final = 1.0


class NotReady(Exception):
    """The entry depends on another one not delivered yet (an update before its post)."""


class Deliverer:
    """Delivers claimed outbox entries through the Web API."""

    def __init__(
        self,
        *,
        client: WebClient,
        approvals: ApprovalStore,
        outbox: Outbox,
        redis_client: redis.Redis,
        home: HomeTab | None = None,
        lease_s: float = 30,
    ):
        """Keep the collaborators; ``home`` refreshes App Home tabs after changes.

        ``lease_s``: how long a claimed entry is ours before another dispatcher may send it.
        """
        self._slack = client
        self._approvals = approvals
        self._outbox = outbox
        self._redis = redis_client
        self._home = home
        self._lease_s = lease_s
        self._senders: dict[str, Callable[[dict[str, Any]], None]] = {
            "post_approval": self._post_approval,
            "post_approval_copy": self._post_approval_copy,
            "update_approval": self._update_approval,
            "post_message": self._post_message,
            "post_ephemeral": self._post_ephemeral,
            "publish_home": self._publish_home,
        }

    def deliver_due(self, *, limit: int = 20) -> int:
        """Send what is due now; return how many entries were handled."""
        entries = self._outbox.claim(lease_s=self._lease_s, limit=limit)
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
        except Exception as error:  # a bug or bad data: count it, and park it rather than retry forever
            logger.exception("entry=<%s>, kind=<%s> | delivery failed", entry.entry_id, entry.kind)
            if entry.attempts + 1 >= _PERMANENT_ATTEMPTS:
                self._park(entry, f"{type(error).__name__}: {error}")
            else:
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
        message = _message_of(approval)
        response = self._slack.chat_postMessage(channel=request.channel_id, thread_ts=request.thread_ts, **message)
        self._approvals.set_message_ts(request.session_id, request.approval_id, str(response["ts"]))
        self._refresh_homes()

    def _post_approval_copy(self, payload: dict[str, Any]) -> None:
        approval = self._approvals.get(payload["session_id"], payload["approval_id"])
        user = payload["user"]
        if approval is None or approval.decision is not None or user in approval.copies:
            return
        response = self._slack.chat_postMessage(channel=user, **_message_of(approval))
        request = approval.request
        self._approvals.add_copy(
            request.session_id, request.approval_id, user=user, channel=str(response["channel"]), ts=str(response["ts"])
        )

    def _update_approval(self, payload: dict[str, Any]) -> None:
        approval = self._approvals.get(payload["session_id"], payload["approval_id"])
        if approval is None:
            return
        request = approval.request
        if not request.message_ts:
            raise NotReady
        message = _message_of(approval)
        self._slack.chat_update(channel=request.channel_id, ts=request.message_ts, **message)
        for channel, ts in approval.copies.values():
            self._slack.chat_update(channel=channel, ts=ts, **message)
        self._refresh_homes()

    def _publish_home(self, payload: dict[str, Any]) -> None:
        if self._home is not None:
            self._slack.views_publish(user_id=payload["user"], view=self._home.view_for(payload["user"]))

    def _refresh_homes(self) -> None:
        """Queue a refresh of every App Home that shows approvals (a change may alter each queue)."""
        for viewer in self._redis.smembers(keys.HOME_VIEWERS):
            user = viewer.decode() if isinstance(viewer, bytes) else str(viewer)
            self._outbox.send_later(home_refresh(user))

    def _post_message(self, payload: dict[str, Any]) -> None:
        self._slack.chat_postMessage(**payload)

    def _post_ephemeral(self, payload: dict[str, Any]) -> None:
        self._slack.chat_postEphemeral(**payload)


def _message_of(approval: Approval) -> dict[str, Any]:
    return blocks.approval_message(approval.request, decision=approval.decision, progress=progress_of(approval))
