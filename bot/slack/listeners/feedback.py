"""Tell a clicker what happened to their click: an ephemeral message through the outbox.

Clicks on the App Home tab come from no channel: there the answer is a direct message.
"""

from dataclasses import dataclass
from typing import Any

from bot.flow.access import DenyBinding, Origin
from bot.flow.decisions import Outcome
from bot.render import messages
from bot.store.outbox import Outbox, post_ephemeral, post_message


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
        return messages.membership_unknown()
    if outcome.status == "wrong_workspace":
        return messages.other_workspace_refused()
    if outcome.status == "wrong_place":
        return messages.wrong_place_refused()
    if outcome.status == "not_a_member" and outcome.approval is not None:
        return messages.not_a_channel_member(outcome.approval.request.channel_id)
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


def click_origin(body: dict[str, Any]) -> Origin:
    """Where a ``block_actions`` click comes from: a message (its channel and ts) or the App Home tab.

    A missing team counts as another workspace (fails closed): Slack always sends both.
    """
    team_id = str((body.get("team") or {}).get("id") or "")
    user_team_id = str((body.get("user") or {}).get("team_id") or "")
    container = body.get("container") or {}
    if container.get("type") == "view" and (body.get("view") or {}).get("type") == "home":
        return Origin("home", team_id, user_team_id)
    if container.get("type") != "message":
        return Origin("message", team_id, user_team_id)  # nowhere an approval is shown: refused as such
    channel_id, ts, thread_ts = container.get("channel_id"), container.get("message_ts"), container.get("thread_ts")
    return Origin("message", team_id, user_team_id, channel_id, ts, thread_ts)


def reply_origin(body: dict[str, Any], event: dict[str, Any]) -> Origin:
    """Where a thread reply comes from: its channel, its thread, the person's workspace (``user_team``)."""
    user_team_id = str(event.get("user_team") or event.get("team") or "")
    return Origin("reply", str(body.get("team_id") or ""), user_team_id, event.get("channel"), event.get("thread_ts"))


def modal_origin(body: dict[str, Any], binding: DenyBinding) -> Origin:
    """Where a deny modal's Deny button was clicked, with the workspaces of the submission."""
    team_id = str((body.get("team") or {}).get("id") or "")
    user_team_id = str((body.get("user") or {}).get("team_id") or "")
    return Origin(binding.surface, team_id, user_team_id, binding.channel_id, binding.ts)


def tell(outbox: Outbox, *, channel: str | None, user: str, text: str, thread_ts: str | None = None) -> None:
    """Queue a message only ``user`` sees: ephemeral in ``channel``, or a DM when there is no channel."""
    if channel is None:
        outbox.send_later(post_message(user, text))
        return
    outbox.send_later(post_ephemeral(channel, user=user, text=text, thread_ts=thread_ts))
