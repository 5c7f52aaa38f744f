"""The texts of an approval message (header, who asks for what, policy, progress, outcome) and of its deny modal.

Functions return Slack mrkdwn unless their name or docstring says plain text.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from bot.domain.records import ApprovalRequest, Decision, PolicySummary
from bot.render.safe_text import (
    MAX_DECISION_REASON,
    MAX_NAME,
    clip,
    clip_plain,
    code_inline,
    mention_group,
    mention_user,
)
from bot.render.texts.times import slack_date

MAX_LISTED_APPROVERS = 20
MAX_APPROVER_LISTS = 3  # a batch under several rules: one list per rule

# Labels (plain text; the button ones are far below 75 characters, the modal ones below 24).
APPROVE_LABEL: Final = "Approve"
DENY_LABEL: Final = "Deny"
DISCUSS_LABEL: Final = "Discuss"
EDIT_LABEL: Final = "Edit"
ANSWER_INSTEAD_LABEL: Final = "Answer instead"
TAKE_LABEL: Final = "Claim"
"""Take ("I'm on it"): the button keeps the word people know from ticket queues; "claimed by" shows who took it."""
CANCEL_LABEL: Final = "Cancel"
DENY_MODAL_TITLE: Final = "Deny request"
DENY_MODAL_SUBMIT: Final = "Deny"
DENY_MODAL_CLOSE: Final = CANCEL_LABEL
DENY_REASON_PLACEHOLDER: Final = "Why not? The agent and the requester will read this."
ARGUMENTS_LABEL: Final = "*Arguments*"
CALLS_LABEL: Final = "*Tool calls (the whole batch waits for this decision)*"
REASON_LABEL: Final = "*Reason*"
NOTHING_CHANGED: Final = "(nothing)"
"""What an edit that changes no leaf lists as its changes."""
UNDISPLAYABLE: Final = "(could not be displayed: nested too deeply or not serializable)"
HIDDEN_CHARACTERS_WARNING: Final = (
    "⚠️ *Contains hidden characters*: invisible, control or text-direction characters are shown as "
    "⟨U+…⟩. Read exactly what you approve."
)


def who_decided(user_id: str | None) -> str:
    """A mention of who decided, or "an approver" when the record names nobody."""
    return mention_user(user_id) if user_id else "an approver"


def edited_by(user_id: str) -> str:
    """The label above what an approver's edit changed (mrkdwn)."""
    return f"✏️ *Edited by {mention_user(user_id)}* before approval. What changed:"


def trust_label(tool: str | None) -> str:
    """Plain text of the button that approves the call and trusts its tool for the session (at most 75 characters)."""
    return clip_plain(f"Approve and trust {tool or 'this tool'} for this session", 75)


def approval_header(tool: str | None) -> str:
    """Plain text of the header (at most 150 characters)."""
    return clip_plain(f"Approval needed: {tool}" if tool else "Approval needed", 150)


def tool_unknown(interrupt_name: str) -> str:
    """Said when the interrupt names no tool call the bot can find (an invocation gate, say)."""
    return (
        f"⚠️ The tool this request guards could not be determined: only the rules for the interrupt "
        f"{code_inline(interrupt_name)} and the default policy apply."
    )


def asker(request: ApprovalRequest) -> str:
    """Who asked: the requester; for a request made through the HTTP API, its client (and whom it acts for)."""
    if request.client is None:
        return mention_user(request.requested_by)
    client = f"{code_inline(request.client)} (API)"
    return f"{mention_user(request.requested_by)} via {client}" if request.requested_by else client


def request_intro(request: ApprovalRequest, tool: str | None) -> str:
    """Who asked, and what waits for a decision (``tool``: the tool or tools it guards, if known)."""
    if request.client is not None:
        return f"{asker(request)} asks for a sign-off to run {code_inline(tool or request.interrupt_name)}."
    if tool:
        return f"{asker(request)} asked the agent, and it wants to run {code_inline(tool)}."
    return f"{asker(request)} asked the agent, and it waits for a decision on {code_inline(request.interrupt_name)}."


def rerun_warning() -> str:
    """On a request to run again a call whose earlier attempt may have run."""
    return (
        "⚠️ *This call may already have run.* An earlier attempt started, but its worker stopped "
        "before the result was recorded. Check whether it took effect: *Approve* runs it again, "
        "*Deny* leaves it as it is (not run again)."
    )


def approvers_text(policy: PolicySummary) -> str:
    """Who may decide: mentions of the listed users and groups, or anyone (except the requester)."""
    if not policy.approver_users and not policy.approver_groups:
        return "anyone" if policy.allow_self_approval else "anyone except the requester"
    # A batch under several rules: the person must be in every list.
    lists = [(policy.approver_users, policy.approver_groups)]
    lists += [(extra.users, extra.usergroups) for extra in policy.also_approvers]
    shown = [_listed_approvers(users, groups) for users, groups in lists[:MAX_APPROVER_LISTS]]
    listed = shown[0] if len(lists) == 1 else "one of " + "; and one of ".join(shown)
    if len(lists) > MAX_APPROVER_LISTS:
        listed += f"; and one of each of {len(lists) - MAX_APPROVER_LISTS} more lists"
    return listed if policy.allow_self_approval else f"{listed} (not the requester)"


def _listed_approvers(users: Sequence[str], groups: Sequence[str]) -> str:
    mentions = [mention_user(u) for u in users] + [mention_group(g) for g in groups]
    listed = ", ".join(mentions[:MAX_LISTED_APPROVERS])
    if len(mentions) > MAX_LISTED_APPROVERS:
        listed += f" and {len(mentions) - MAX_LISTED_APPROVERS} more"
    return listed


def policy_line(policy: PolicySummary) -> str:
    """The policy, in one context line."""
    line = f"Policy *{clip(policy.name, MAX_NAME)}* · May decide: {approvers_text(policy)}"
    return line + (" · A reason is required to deny" if policy.reason_required_on_deny else "")


def requested_at(at: datetime) -> str:
    """When the interrupt was raised."""
    return f"Requested {slack_date(at)}"


def expires(at: datetime) -> str:
    """When the request expires without a decision."""
    return f"⏳ Expires {slack_date(at)} without a decision"


def decision_status(decision: Decision) -> str:
    """The outcome, as the decided message shows it."""
    at = slack_date(decision.decided_at)
    if decision.by_rule is not None:
        return by_rule_status(decision, at)
    if decision.by_grant is not None:
        return (
            f"✅ Allowed at {at} by {who_decided(decision.decided_by)}'s standing approval: nobody was asked this time"
        )
    if decision.decision == "approve" and decision.trusted:
        return (
            f"✅ Approved by {who_decided(decision.decided_by)} at {at}, and the tool trusted for the rest of this "
            "session: the agent will not ask about it again here (revoke it on App Home)"
        )
    if decision.decision == "approve":
        reason = f": {clip(decision.reason, MAX_DECISION_REASON)}" if decision.reason else ""
        return f"✅ Approved by {who_decided(decision.decided_by)} at {at}{reason}"
    if decision.decision == "deny":
        reason = f": {clip(decision.reason, MAX_DECISION_REASON)}" if decision.reason else " (no reason given)"
        return f"❌ Denied by {who_decided(decision.decided_by)} at {at}{reason}"
    if decision.decision == "answer":
        return f"💬 Answered by {who_decided(decision.decided_by)} at {at}"
    return f"⌛ Expired without a decision at {at}"


def by_rule_status(decision: Decision, at: str) -> str:
    """The outcome of a decision a policy rule made without asking anyone (``at``: its Slack date token)."""
    rule = code_inline(decision.by_rule or "")
    if decision.decision == "approve":
        return f"✅ Allowed without asking by rule {rule} at {at}"
    reason = f": {clip(decision.reason, MAX_DECISION_REASON)}" if decision.reason else ""
    return f"🚫 Refused by rule {rule} at {at}, nobody was asked{reason}"


def discussion_count(replies: int) -> str:
    """How many discussion replies travelled to the agent with the decision."""
    if replies == 0:
        return "No discussion replies travelled with it."
    return f"{replies} discussion {'reply' if replies == 1 else 'replies'} travelled with it."


def approval_fallback(request: ApprovalRequest, decision: Decision | None = None) -> str:
    """Notification text of the approval message (shown where blocks are not)."""
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    text = f"Approval needed: {asker(request)} → {what}"
    return text if decision is None else f"{text} · {decision_status(decision)}"


def deny_modal_intro(request: ApprovalRequest) -> str:
    """The deny modal's first line."""
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    return f"Deny {asker(request)}'s request {what}? The agent is told your reason."


def deny_reason_label(required: bool) -> str:
    """Plain-text label of the reason input."""
    return "Reason" if required else "Reason (optional)"


def taken(user_id: str, until: datetime) -> str:
    """Who took a request ("I'm on it"), as its message shows it: in the word people know, "claimed"."""
    return f"👀 Claimed by {mention_user(user_id)} until {slack_date(until)}"


def votes_so_far(votes: int, quorum: int, approvers: tuple[str, ...]) -> str:
    """Progress toward a quorum."""
    who = ", ".join(mention_user(user) for user in approvers)
    return f"🗳️ {votes} of {quorum} approvals so far" + (f": {who}" if who else "")


def escalation_level(level: int) -> str:
    """How far up the ladder a request went."""
    return f"🔔 Escalated to level {level}"
