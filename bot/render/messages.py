"""Every user-facing text of the bot, and the few primitives that make text safe to interpolate.

Functions return Slack mrkdwn unless their name or docstring says plain text. Anything a user,
an agent or a model controls is escaped (``&``, ``<``, ``>``) before it is interpolated, so an
argument such as ``<!channel>`` is shown, never executed; ids are clipped so no text can grow
past Block Kit's limits. Times use Slack date tokens, which render in each reader's time zone.

Longer than most modules on purpose: one place holds every word the bot says, so wording and
escaping are reviewed together.
"""

import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

from bot.domain.records import ApprovalRequest, Decision, PolicySummary

ELLIPSIS: Final = "…"
MAX_ID = 64  # Slack ids are ~11 characters; anything longer is clipped, never trusted to be short.
MAX_NAME = 200  # tool names, policy names, interrupt names
MAX_DECISION_REASON = 2000
MAX_SUMMARY = 500  # error summaries
MAX_LISTED_APPROVERS = 20
MAX_APPROVER_LISTS = 3  # a batch under several rules: one list per rule

# Labels (plain text; the button ones are far below 75 characters, the modal ones below 24).
APPROVE_LABEL: Final = "Approve"
DENY_LABEL: Final = "Deny"
DISCUSS_LABEL: Final = "Discuss"
CLAIM_LABEL: Final = "Claim"
REVOKE_LABEL: Final = "Revoke"
HOME_GRANTS_TITLE: Final = "Standing approvals"
DENY_MODAL_TITLE: Final = "Deny request"
DENY_MODAL_SUBMIT: Final = "Deny"
DENY_MODAL_CLOSE: Final = "Cancel"
DENY_REASON_PLACEHOLDER: Final = "Why not? The agent and the requester will read this."
ARGUMENTS_LABEL: Final = "*Arguments*"
CALLS_LABEL: Final = "*Tool calls (the whole batch waits for this decision)*"
REASON_LABEL: Final = "*Reason*"
UNDISPLAYABLE: Final = "(could not be displayed: nested too deeply or not serializable)"

_ESCAPES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_JOINERS: Final = frozenset("\u200d\ufe0e\ufe0f")
# Letters and marks that draw nothing (names made of them look blank); the rest is found by category.
_BLANK_LOOKING: Final = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# What str.isprintable() accepts yet may hide: the blank-looking letters and the variation selectors.
_PRINTABLE_BUT_HIDDEN: Final = re.compile("[" + "".join(sorted(_BLANK_LOOKING)) + "\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_FLAG_SEQUENCE: Final = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")  # 🏴 + tags: a region's flag
_REVEALED_MAX: Final = len("⟨U+10FFFF⟩")
HIDDEN_CHARACTERS_WARNING: Final = (
    "⚠️ *Contains hidden characters*: invisible, control or text-direction characters are shown as "
    "⟨U+…⟩. Read exactly what you approve."
)


# ---------------------------------------------------------------- primitives


def escape(text: str) -> str:
    """Escape the three characters mrkdwn gives meaning to: mentions and links stay inert text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _pictographic(ch: str) -> bool:
    return ord(ch) >= 0x1F000 or unicodedata.category(ch) in ("So", "Sk") or ch == "\ufe0f"


def _hidden_at(text: str, index: int) -> bool:
    ch = text[index]
    code = ord(ch)
    if ch == "\u200d":  # a joiner between two emoji builds one emoji (👩‍💻); anywhere else it hides
        return not (0 < index < len(text) - 1 and _pictographic(text[index - 1]) and _pictographic(text[index + 1]))
    if ch in "\ufe0e\ufe0f":  # text / emoji presentation of the character before it
        return index == 0 or text[index - 1].isspace() or _hidden_at(text, index - 1)
    if 0xFE00 <= code <= 0xFE0D or 0xE0100 <= code <= 0xE01EF:  # other variation selectors: invisible
        return True
    if ch in "\n\t":
        return False
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES or ch in _BLANK_LOOKING


def reveal(text: str) -> str:
    """``text`` with every invisible, control or text-direction character shown as ``⟨U+202E⟩``.

    A person must read exactly what they approve: ``cat report_\u202egpj.sh`` would display as
    ``cat report_hs.jpg``. Newlines, tabs and the joiners inside emoji and flags stay as they are.
    """
    if text.replace("\n", "").replace("\t", "").isprintable() and not _PRINTABLE_BUT_HIDDEN.search(text):
        return text  # the common case, checked in C: no control, format or separator character at all
    flags = {match.start(): match.end() for match in _FLAG_SEQUENCE.finditer(text)} if "\U0001f3f4" in text else {}
    shown: list[str] = []
    index = 0
    while index < len(text):
        if index in flags:
            shown.append(text[index : flags[index]])
            index = flags[index]
            continue
        shown.append(f"⟨U+{ord(text[index]):04X}⟩" if _hidden_at(text, index) else text[index])
        index += 1
    return "".join(shown)


def has_hidden(text: str) -> bool:
    """Whether ``reveal`` would change ``text``."""
    return reveal(text) != text


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing to read: only whitespace and invisible characters (``⟨U+200B⟩``, ``⟨U+3164⟩``)."""
    return all(ch.isspace() or _hidden_at(text, index) for index, ch in enumerate(text))


def truncation_marker(omitted: int) -> str:
    """The explicit marker that ends every truncated text."""
    return f"{ELLIPSIS} (truncated, {omitted} more characters)"


def _continues(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it (combining mark, joiner, modifier, tag)."""
    code = ord(ch)
    return (
        unicodedata.combining(ch) != 0
        or ch in _JOINERS
        or 0x1F3FB <= code <= 0x1F3FF  # skin tone modifiers
        or 0xE0020 <= code <= 0xE007F  # tag characters (subdivision flags)
    )


def safe_cut(text: str, cut: int) -> int:
    """Move ``cut`` back so it does not split a visible character (emoji sequence, accent) or a revealed one."""
    original = cut
    opened = text.rfind("⟨", max(cut - _REVEALED_MAX, 0), cut)
    if opened != -1 and text.startswith("⟨U+", opened) and "⟩" not in text[opened:cut]:
        cut = opened
    while 0 < cut < len(text) and (_continues(text[cut]) or text[cut - 1] == "\u200d"):
        cut -= 1
    return cut if cut > 0 else original


def fit_escaped(raw: str, budget: int) -> tuple[str, int]:
    """The longest prefix of ``raw`` whose escaped form fits ``budget``: (escaped prefix, characters left out)."""
    escaped = escape(raw)
    if len(escaped) <= budget:
        return escaped, 0
    used = cut = 0
    for ch in raw:
        cost = len(_ESCAPES.get(ch, ch))
        if used + cost > budget:
            break
        used += cost
        cut += 1
    cut = safe_cut(raw, cut)
    return escape(raw[:cut]), len(raw) - cut


def clip(raw: str, limit: int) -> str:
    """``raw`` revealed and escaped, truncated with the marker so the result is at most ``limit`` characters."""
    raw = reveal(raw)
    escaped = escape(raw)
    if len(escaped) <= limit:
        return escaped
    prefix, omitted = fit_escaped(raw, limit - len(truncation_marker(len(raw))))
    return prefix + truncation_marker(omitted)


def clip_plain(text: str, limit: int) -> str:
    """Plain text (revealed, not escaped: plain_text objects never ping) truncated to ``limit`` characters."""
    text = reveal(text)
    if len(text) <= limit:
        return text
    short = f"{ELLIPSIS} (+{len(text)})"
    cut = safe_cut(text, max(limit - len(short), 0))
    return text[:cut] + f"{ELLIPSIS} (+{len(text) - cut})"


def reveal_inline(text: str) -> str:
    """``reveal`` for text shown on one line (names in inline code): newlines and tabs are spelled out too.

    Inline code cannot span lines: a newline in a tool name would end the span, and the rest of
    the name would render as mrkdwn (a fake quote, a bold "approved").
    """
    return reveal(text).replace("\n", "⟨U+000A⟩").replace("\t", "⟨U+0009⟩")


MAX_INLINE_ARGUMENTS: Final = 160
"""Characters of a call's arguments a one-line mention shows (App Home's recent decisions)."""


def code_inline(raw: str, limit: int = MAX_NAME) -> str:
    """``raw`` as inline code on one line: escaped, backticks replaced so the span cannot end early."""
    shown = clip(reveal_inline(raw.replace("`", "'")), limit) or " "
    return f"`{shown}`"


def mention_user(user_id: str) -> str:
    """A user mention (pings the user)."""
    return f"<@{escape(user_id[:MAX_ID])}>"


def mention_group(group_id: str) -> str:
    """A user-group mention (pings the group)."""
    return f"<!subteam^{escape(group_id[:MAX_ID])}>"


def _who(user_id: str | None) -> str:
    return mention_user(user_id) if user_id else "an approver"


def slack_date(at: datetime) -> str:
    """A Slack date token: short pretty date and time in the reader's zone, UTC text as fallback.

    A naive ``at`` is taken as UTC.
    """
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    fallback = at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} {{time}}|{fallback}>"


# ---------------------------------------------------------------- approval message


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
        return _by_rule_status(decision, at)
    if decision.by_grant is not None:
        return f"✅ Allowed at {at} by {_who(decision.decided_by)}'s standing approval: nobody was asked this time"
    if decision.decision == "approve":
        reason = f": {clip(decision.reason, MAX_DECISION_REASON)}" if decision.reason else ""
        return f"✅ Approved by {_who(decision.decided_by)} at {at}{reason}"
    if decision.decision == "deny":
        reason = f": {clip(decision.reason, MAX_DECISION_REASON)}" if decision.reason else " (no reason given)"
        return f"❌ Denied by {_who(decision.decided_by)} at {at}{reason}"
    return f"⌛ Expired without a decision at {at}"


def _by_rule_status(decision: Decision, at: str) -> str:
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


# ---------------------------------------------------------------- replies to clicks and submissions


def already_decided(decision: Decision) -> str:
    """Ephemeral answer to a click on a request that is already decided."""
    at = slack_date(decision.decided_at)
    if decision.by_rule is not None:
        return f"Already decided: {_by_rule_status(decision, at)}"
    if decision.decision == "approve":
        return f"Already approved by {_who(decision.decided_by)} at {at}"
    if decision.decision == "deny":
        return f"Already denied by {_who(decision.decided_by)} at {at}"
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


def discussion_prompt(user_id: str) -> str:
    """Thread message when someone opens a discussion."""
    return (
        f"{mention_user(user_id)} wants to discuss this request. Reply in this thread: "
        "the replies travel to the agent with the decision."
    )


def unknown_approval() -> str:
    """Ephemeral answer to a click on a request the bot no longer knows."""
    return "This approval request is no longer known (it may have expired and been cleaned up). Nothing was recorded."


def store_unreachable() -> str:
    """Ephemeral answer to a click, command or modal received while Redis is unreachable."""
    return "⚠️ Not recorded: Signoff cannot reach its database right now. Nothing changed; try again in a moment."


def click_failed(error_summary: str) -> str:
    """Ephemeral answer when recording a click failed."""
    return f"Your click was not recorded: {clip(error_summary, MAX_SUMMARY)} — try again."


def refusal_account(decision: Decision) -> str:
    """What people read of a refused call: who refused it (a mention) and why, or that nobody decided in time."""
    if decision.decision == "expired":
        return "Not run: nobody decided in time."
    reason = f": {clip(decision.reason, MAX_DECISION_REASON)}" if decision.reason else " (no reason given)"
    if decision.by_rule is not None:
        return f"Not run: the policy rule {code_inline(decision.by_rule)} refused it{reason}"
    return f"Not run: {_who(decision.decided_by)} denied it{reason}"


def agent_reply(text: str, accounts: Mapping[str, str] | None = None) -> str:
    """The agent's answer as mrkdwn: revealed and escaped (a model cannot ping a channel), never empty.

    Args:
        text: The agent's raw answer.
        accounts: Texts of ours the answer may repeat word for word (what a refused call told the model), each
            with the mrkdwn people read in its place.
    """
    stripped = text.strip()
    if not stripped:
        return "_(The agent returned no text.)_"
    if not accounts:
        return escape(reveal(stripped))
    ours = re.compile("|".join(re.escape(said) for said in sorted(accounts, key=len, reverse=True)))
    pieces, start = [], 0
    for match in ours.finditer(stripped):
        pieces += [escape(reveal(stripped[start : match.start()])), accounts[match.group()]]
        start = match.end()
    return "".join([*pieces, escape(reveal(stripped[start:]))])


MAX_ECHOED_REQUEST: Final = 2000


def unescape_slack(text: str) -> str:
    """Text as the person typed it: Slack sends ``&``, ``<`` and ``>`` of typed text as entities."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def command_echo(user_id: str, request: str) -> str:
    """The channel message a ``/agent`` request opens its thread with: the request shown as typed, never
    live (``<!channel>``, a mention or a disguised link in it stay inert text)."""
    return f"{mention_user(user_id)} asked the agent: {clip(unescape_slack(request), MAX_ECHOED_REQUEST)}"


def command_not_started(error: str) -> str:
    """Ephemeral answer to ``/agent`` when its request could not be posted in the channel (nothing started)."""
    if error in ("not_in_channel", "channel_not_found"):
        return (
            "Your request was not started: I am not in this channel. "
            "Invite me (`/invite @Signoff`) or mention me in a channel I am in, then try again."
        )
    return f"Your request was not started: Slack refused to post it ({clip(error, MAX_SUMMARY)}). Try again."


def session_busy() -> str:
    """Thread answer when a request arrives while the thread's agent waits for approvals."""
    return (
        "The agent in this thread is waiting for the approvals above. Decide them first; "
        "then mention me again with your new request."
    )


def agent_retrying(error_summary: str) -> str:
    """Thread message after a job's first failure (it is retried)."""
    return f"⚠️ The agent hit an error and will retry: {clip(error_summary, MAX_SUMMARY)}"


def redis_unreachable() -> str:
    """Thread message when a job's step failed because Redis was unreachable (it is retried)."""
    return "⏳ Redis was unreachable, so this step is delayed; retrying."


def agent_gave_up(error_summary: str, attempts: int) -> str:
    """Thread message when a job failed for good."""
    return f"❌ The agent failed {attempts} times and gave up: {clip(error_summary, MAX_SUMMARY)}"


def agent_value_unstorable(error_summary: str) -> str:
    """Thread message when the agent produced a value that cannot be stored (not retried: it would recur)."""
    summary = clip(error_summary, MAX_SUMMARY)
    return f"❌ The agent produced a value that cannot be stored, so it was stopped, not retried: {summary}"


_SHAPE_WORDS: Final = {
    "record": "the decision record (a dict: decision, decided_by, reason, discussion, decided_at)",
    "yes_no": 'the string "y" or "n"',
    "boolean": "a boolean (True or False)",
}


def agent_code_failed(error_summary: str, shapes: Sequence[str]) -> str:
    """Thread message when the agent's code failed on the responses it was resumed with (not retried)."""
    received = " and ".join(_SHAPE_WORDS.get(shape, shape) for shape in dict.fromkeys(shapes)) or "no response"
    return (
        f"❌ The agent's code failed on the approval response and was stopped, not retried: "
        f"{clip(error_summary, MAX_SUMMARY)}. The hook received {received}. "
        "To change what it receives, set `response:` (record, yes_no or boolean) on the policy rule, "
        'or a "response" key in the interrupt\'s reason. The decisions are kept: once the agent is fixed, '
        "mention me in this thread (or run `python -m bot resume <session id>`) and it continues."
    )


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


def _age(waited: timedelta) -> str:
    minutes = int(waited.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def for_duration(seconds: int) -> str:
    """A duration as a person says it: ``15 min``, ``1 h``, ``1 h 30 min``, ``2 d``."""
    if seconds >= 86_400 and seconds % 86_400 == 0:
        return f"{seconds // 86_400} d"
    if seconds < 60:
        return f"{seconds} s"
    return _age(timedelta(seconds=seconds))


def approve_and_allow_label(seconds: int) -> str:
    """The button that approves and makes a standing approval (plain text, at most 75 characters)."""
    return f"Approve + allow {for_duration(seconds)}"


def approve_and_allow_confirm(request: ApprovalRequest, seconds: int) -> str:
    """What the person confirms before a standing approval is made (mrkdwn; every part bounded, so the whole stays
    within a confirm dialog's 300 characters)."""
    if request.policy.grant_scope == "channel":
        who = ", asked by anyone"
    else:
        who = f", asked by {mention_user(request.requested_by)}" if request.requested_by else ""
    tool = code_inline(request.tool or request.interrupt_name, 60)
    return (
        f"Approve this call, and for {for_duration(seconds)} run {tool} with exactly these arguments in "
        f"<#{escape(request.channel_id[:24])}>{who} without asking. Revoke it on App Home."
    )


def grant_made(request: ApprovalRequest, *, until: datetime, fields: Sequence[str] | None = None) -> str:
    """Told to the person whose "Approve + allow" made a standing approval (``fields``: the ones they picked)."""
    tool = code_inline(request.tool or request.interrupt_name)
    what = "exactly these arguments"
    if fields is not None:
        what = f"these values of {', '.join(code_inline(name, 40) for name in fields[:10])} (any other arguments)"
    return (
        f"Approved. {tool} with {what} now runs here without asking until {slack_date(until)}; "
        "revoke it on your App Home."
    )


def grant_not_offered() -> str:
    """An "Approve + allow" button whose duration the request's rule does not offer (nothing was recorded)."""
    return "This request's policy offers no standing approval for that long: nothing was recorded."


def grant_line(*, tool: str, arguments: str, channel_id: str, requester: str | None, until: datetime, uses: int) -> str:
    """One standing approval on App Home."""
    who = f" for {mention_user(requester)}'s requests" if requester else ""
    used = f"used {uses} time{'s' if uses != 1 else ''}"
    return (
        f"{code_inline(tool)} {arguments} in <#{escape(channel_id[:MAX_ID])}>{who} · until {slack_date(until)} · {used}"
    )


def grant_revoked(tool: str) -> str:
    """Told to the person who revoked a standing approval."""
    return f"Revoked: the next {code_inline(tool)} call is asked again."


def grant_gone() -> str:
    """A Revoke click on a standing approval that ended already."""
    return "That standing approval has ended already."


def home_more_grants(hidden: int) -> str:
    """More standing approvals than the tab shows (soonest to end first)."""
    return f"…and {hidden} more, ending later: python -m bot grants lists them all."


def home_grants_empty() -> str:
    """App Home with no standing approvals of the viewer's."""
    return "None: approve with “Approve + allow” where a rule offers it."


def reminder(request: ApprovalRequest, *, waited: timedelta) -> str:
    """The periodic nudge in the thread while a request waits."""
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    who = asker(request)
    return f"⏰ Still waiting for a decision on {what} (asked by {who}, {_age(waited)} ago)."


def escalation(
    request: ApprovalRequest, *, level: int, users: tuple[str, ...], usergroups: tuple[str, ...], waited: timedelta
) -> str:
    """An escalation rung, mentioning its targets."""
    targets = " ".join([*(mention_user(user) for user in users), *(mention_group(group) for group in usergroups)])
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    return f"🔔 Escalation, level {level}: {targets} — {what} has waited {_age(waited)} for a decision."


def expired_kept() -> str:
    """Expiry with the ``keep`` outcome."""
    return "⌛ This request's time ran out; it stays open until someone decides."


def claimed(user_id: str, until: datetime) -> str:
    """Who is looking at a request, as its message shows it."""
    return f"👀 Claimed by {mention_user(user_id)} until {slack_date(until)}"


def votes_so_far(votes: int, quorum: int, approvers: tuple[str, ...]) -> str:
    """Progress toward a quorum."""
    who = ", ".join(mention_user(user) for user in approvers)
    return f"🗳️ {votes} of {quorum} approvals so far" + (f": {who}" if who else "")


def escalation_level(level: int) -> str:
    """How far up the ladder a request went."""
    return f"🔔 Escalated to level {level}"


def vote_recorded(votes: int, quorum: int) -> str:
    """Ephemeral confirmation of a vote that did not reach the quorum yet."""
    return f"Your approval is counted: {votes} of {quorum} needed."


def already_voted() -> str:
    """A second approval by the same person."""
    return "You have already approved this request; it needs approvals from other people."


def claim_recorded(until: datetime) -> str:
    """Ephemeral confirmation of a claim."""
    return f"You claimed this request: escalation pauses until {slack_date(until)}."


def claims_off() -> str:
    """Claim on a request whose policy has no claims."""
    return "This request's policy has no claims."


HOME_QUEUE_TITLE: Final = "Waiting for your decision"
HOME_RECENT_TITLE: Final = "Recent decisions"


def home_queue_empty() -> str:
    """The App Home queue with nothing in it."""
    return "Nothing is waiting for you. 🎉"


def home_recent_empty() -> str:
    """The App Home with no decisions yet."""
    return "No decisions yet."


def home_more(hidden: int) -> str:
    """More requests than the tab shows."""
    return f"…and {hidden} more, oldest first above."


def home_item_status(request: ApprovalRequest, *, now: datetime, level: int, claimed_by: str | None) -> str:
    """Age, escalation level and claim of a request in someone's queue."""
    parts = [f"waiting {_age(now - request.created_at)}", f"in <#{request.channel_id}>"]
    if level:
        parts.append(f"escalation level {level}")
    if claimed_by:
        parts.append(f"claimed by {mention_user(claimed_by)}")
    return " · ".join(parts)


def home_recent_line(request: ApprovalRequest, decision: Decision, arguments: str) -> str:
    """One recent decision on the App Home; ``arguments``: the call's, as inline code."""
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    return f"{what} {arguments}: {decision_status(decision)}"


def pending_header(count: int) -> str:
    """Heading of the ``/approvals`` answer."""
    return f"*{count} request{'s' if count != 1 else ''} waiting for a decision in this channel:*"


def pending_line(request: ApprovalRequest, *, now: datetime, link: str | None) -> str:
    """One pending request in the ``/approvals`` answer."""
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    where = f" — <{link}|open>" if link else ""
    return f"• {what} asked by {asker(request)}, waiting {_age(now - request.created_at)}{where}"


def nothing_pending() -> str:
    """``/approvals`` when nothing waits."""
    return "Nothing is waiting for a decision in this channel."


MAX_PENDING_TEXT: Final = 30_000  # well within the 40,000 characters Slack takes as a message's text


def pending_list(lines: list[str]) -> str:
    """The ``/approvals`` answer: the header and the ``pending_line``s that fit, then how many more wait."""
    if not lines:
        return nothing_pending()
    shown = [pending_header(len(lines))]
    used = len(shown[0])
    for index, line in enumerate(lines):
        if used + 1 + len(line) > MAX_PENDING_TEXT:
            shown.append(home_more(len(lines) - index))
            break
        shown.append(line)
        used += 1 + len(line)
    return "\n".join(shown)


# ---------------------------------------------------------------- shortened values


NESTED_TOO_DEEPLY: Final = f"{ELLIPSIS} (nested too deeply: not shown)"


def more_not_shown(count: int) -> str:
    """Marker ending a list or object shortened to fit (``count`` entries left out)."""
    return f"(truncated, {count} more {'entry' if count == 1 else 'entries'} not shown)"


# ---------------------------------------------------------------- the sandbox (plain text, a terminal)


def sandbox_host_refused(host: str) -> str:
    """``python -m bot sandbox --host <not loopback>`` without ``--public``."""
    return (
        f"the sandbox page lets whoever opens it act as any user, so it listens on 127.0.0.1 only; "
        f"to serve it on {host} anyway, add --public"
    )


def sandbox_public_warning(host: str) -> str:
    """Printed when the sandbox serves an address other machines can reach."""
    rule = "!" * 78
    return (
        f"{rule}\nWARNING: the sandbox listens on {host}. Anyone who can reach this address can open the "
        f"page and act as any user: approve, deny, read every thread. Use it on a trusted network only.\n{rule}"
    )


def sandbox_api_hint(api_url: str, key: str) -> str:
    """The sandbox's second line: its HTTP API, a key for it, and a first request to try."""
    return (
        f"HTTP API: {api_url} (key: {key}). Try: curl -s {api_url}approvals -H 'Authorization: Bearer {key}' "
        """-H 'Content-Type: application/json' -d '{"tool": "restart_service", "input": {"service": "checkout"}}'"""
    )
