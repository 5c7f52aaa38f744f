"""Tell a clicker what happened to their click: an ephemeral message through the outbox.

Clicks on the App Home tab come from no channel: there the answer is a direct message.
"""

from dataclasses import dataclass
from typing import Any

from bot import messages
from bot.decisions import Outcome
from bot.outbox import Outbox, OutboxEntry


def outcome_text(outcome: Outcome) -> str | None:
    """The ephemeral text for a refused or repeated click (``None`` when there is nothing to say)."""
    if outcome.status == "already" and outcome.decision is not None:
        return messages.already_decided(outcome.decision)
    if outcome.status == "not_an_approver":
        return messages.not_authorized(outcome.approvers_text)
    if outcome.status == "self_approval":
        return messages.self_approval_refused()
    if outcome.status == "unknown":
        return messages.unknown_approval()
    if outcome.status == "unavailable":
        return messages.click_failed("Slack could not tell us who is in the approver groups")
    if outcome.status == "reason_required":
        return messages.reason_required()
    if outcome.status == "vote" and outcome.approval is not None:
        return messages.vote_recorded(outcome.votes, outcome.approval.request.policy.quorum)
    if outcome.status == "voted":
        return messages.already_voted()
    if outcome.status == "no_claims":
        return messages.claims_off()
    return None


@dataclass(frozen=True)
class Clicker:
    """Who clicked, and where (``channel`` is ``None`` for a click on the App Home tab)."""

    user: str
    channel: str | None
    thread_ts: str | None


def clicker(body: dict[str, Any]) -> Clicker:
    """Read who clicked and where from a ``block_actions`` body."""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    thread_ts = (body.get("message") or {}).get("thread_ts")
    return Clicker(body["user"]["id"], channel, thread_ts)


def tell(outbox: Outbox, *, channel: str | None, user: str, text: str, thread_ts: str | None = None) -> None:
    """Queue a message only ``user`` sees: ephemeral in ``channel``, or a DM when there is no channel."""
    if channel is None:
        outbox.send_later(OutboxEntry("post_message", {"channel": user, "text": text}))
        return
    payload = {"channel": channel, "user": user, "text": text}
    if thread_ts:
        payload["thread_ts"] = thread_ts
    outbox.send_later(OutboxEntry("post_ephemeral", payload))
