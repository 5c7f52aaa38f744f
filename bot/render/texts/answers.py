"""What the bot answers a person who clicked, submitted a form or typed a decision (mostly ephemeral messages).

Functions return Slack mrkdwn unless their docstring says plain text.
"""

from datetime import datetime

from bot.domain.records import ApprovalRequest, Decision
from bot.render.safe_text import MAX_ID, MAX_SUMMARY, clip, code_inline, escape
from bot.render.texts.approval_request import by_rule_status, who_decided
from bot.render.texts.times import slack_date


def already_decided(decision: Decision) -> str:
    """Ephemeral answer to a click on a request that is already decided."""
    at = slack_date(decision.decided_at)
    if decision.by_rule is not None:
        return f"Already decided: {by_rule_status(decision, at)}"
    if decision.decision == "approve":
        return f"Already approved by {who_decided(decision.decided_by)} at {at}"
    if decision.decision == "deny":
        return f"Already denied by {who_decided(decision.decided_by)} at {at}"
    if decision.decision == "answer":
        return f"Already answered by {who_decided(decision.decided_by)} at {at}: the agent has that answer."
    return f"Already expired without a decision at {at}"


def not_authorized(approvers: str) -> str:
    """Ephemeral answer to a click by someone the policy does not allow (``approvers``: ``approvers_text``)."""
    return f"You can't decide this request: only {approvers} may approve or deny it."


def self_approval_refused() -> str:
    """Ephemeral answer to a requester trying to approve their own request."""
    return "You asked for this, so you can't approve it yourself: another approver has to."


def other_workspace_refused() -> str:
    """Ephemeral answer to someone of another workspace (or a payload naming another team)."""
    return (
        "You can't decide this request: it belongs to another workspace, and its policy does not let "
        "people from other workspaces decide. Nothing was recorded."
    )


def wrong_place_refused() -> str:
    """Ephemeral answer to a click or form that does not match where its approval was shown."""
    return (
        "This button or form does not match the approval it names, so nothing was recorded. "
        "Use the buttons on the approval message itself (or click Deny again)."
    )


def not_a_channel_member(channel_id: str) -> str:
    """Ephemeral answer to someone who is not in the request's channel."""
    return (
        f"You can't decide this request: only members of <#{escape(channel_id[:MAX_ID])}> may decide it. "
        "Nothing was recorded."
    )


def membership_unknown() -> str:
    """Ephemeral answer when Slack could not tell who may decide (channel members or user groups)."""
    return "Slack could not tell us who may decide this request right now, so nothing was recorded — try again."


def reason_required() -> str:
    """Modal error (plain text) for a blank reason where the policy requires one."""
    return "Please give a reason: this policy requires one to deny."


def unknown_approval() -> str:
    """Ephemeral answer to a click on a request the bot no longer knows."""
    return "This approval request is no longer known (it may have expired and been cleaned up). Nothing was recorded."


def store_unreachable() -> str:
    """Ephemeral answer to a click, command or modal received while Redis is unreachable."""
    return "⚠️ Not recorded: Signoff cannot reach its database right now. Nothing changed; try again in a moment."


def click_failed(error_summary: str) -> str:
    """Ephemeral answer when recording a click failed."""
    return f"Your click was not recorded: {clip(error_summary, MAX_SUMMARY)} — try again."


def vote_recorded(votes: int, quorum: int) -> str:
    """Ephemeral confirmation of a vote that did not reach the quorum yet."""
    return f"Your approval is counted: {votes} of {quorum} needed."


def already_voted() -> str:
    """A second approval by the same person."""
    return "You have already approved this request; it needs approvals from other people."


def take_recorded(until: datetime) -> str:
    """Ephemeral confirmation of a Take ("I'm on it"): the word people read stays "claimed"."""
    return f"You claimed this request: escalation pauses until {slack_date(until)}."


def takes_off() -> str:
    """Take on a request whose policy has no claim pause."""
    return "This request's policy has no claims."


def button_unknown() -> str:
    """A click on a button this version of the bot does not know (a message posted by an older or newer one)."""
    return "This button is no longer known: nothing was recorded. Use the buttons of the request's current message."


def several_open() -> str:
    """A typed decision in a thread with more than one open approval."""
    return "Several approvals are open in this thread: use the buttons on the one you mean."


def _requested_thing(request: ApprovalRequest) -> str:
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    return f"the request to run {what}" if request.tool else f"the {what} request"


def typed_decision_unseen() -> str:
    """A typed decision written before any open request of the thread was posted: it decides nothing."""
    return (
        "Nothing was decided: no open request in this thread had been posted when you wrote this. "
        "Read the request first, then use its buttons or reply again."
    )


def typed_decision_applied(kind: str, request: ApprovalRequest) -> str:
    """Which request a typed ``approve:`` / ``deny:`` decided."""
    verb = "approved" if kind == "approve" else "denied"
    return f"Your reply {verb} {_requested_thing(request)} (raised {slack_date(request.created_at)})."


def typed_vote_counted(request: ApprovalRequest, votes: int, quorum: int) -> str:
    """A typed approval counted toward a quorum, naming the request."""
    return f"Your approval of {_requested_thing(request)} is counted: {votes} of {quorum} needed."
