"""What the bot posts in a request's thread: the request echoed, the agent's answer, refusals, failures, reminders.

Functions return Slack mrkdwn. What a model wrote is revealed and escaped like anything else it controls.
"""

import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Final

from bot.domain.records import ApprovalRequest, Decision
from bot.render.safe_text import (
    MAX_DECISION_REASON,
    MAX_SUMMARY,
    clip,
    code_inline,
    escape,
    mention_group,
    mention_user,
    reveal,
    unescape_slack,
)
from bot.render.texts import questions
from bot.render.texts.approval_request import asker, who_decided
from bot.render.texts.times import age


def discussion_prompt(user_id: str) -> str:
    """Thread message when someone opens a discussion."""
    return (
        f"{mention_user(user_id)} wants to discuss this request. Reply in this thread: "
        "the replies travel to the agent with the decision."
    )


def refusal_account(decision: Decision) -> str:
    """What people read of a refused call: who refused it (a mention) and why, or that nobody decided in time."""
    if decision.decision == "expired":
        return "Not run: nobody decided in time."
    reason = f": {clip(decision.reason, MAX_DECISION_REASON)}" if decision.reason else " (no reason given)"
    if decision.by_rule is not None:
        return f"Not run: the policy rule {code_inline(decision.by_rule)} refused it{reason}"
    return f"Not run: {who_decided(decision.decided_by)} denied it{reason}"


def answer_given(request: ApprovalRequest, decision: Decision) -> str:
    """The thread's record of an answer: who answered what, quoted (escaped, hidden characters shown, clipped)."""
    to = "the agent" if request.client is None else code_inline(request.client)
    quote = questions.answer_quote(decision) or ""
    return f"💬 {who_decided(decision.decided_by)} answered {questions.subject(request)}; sent to {to}:\n{quote}"


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


def command_echo(user_id: str, request: str) -> str:
    """The channel message a ``/agent`` request opens its thread with: the request shown as typed.

    Never live: ``<!channel>``, a mention or a disguised link in it stay inert text.
    """
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


def agent_setup_failed(error_summary: str) -> str:
    """Thread message when the agent cannot be built or run as written (not retried: every run would fail so)."""
    return (
        f"❌ The agent could not run, so it was stopped, not retried: {clip(error_summary, MAX_SUMMARY)}. "
        "This is a fault in the agent's code or its factory (`AGENT_FACTORY`), not a passing one. "
        "Once it is fixed, mention me in this thread and I will carry on."
    )


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


def reminder(request: ApprovalRequest, *, waited: timedelta) -> str:
    """The periodic nudge in the thread while a request waits."""
    who = asker(request)
    if request.asks:
        return f"⏰ Still waiting for an answer to {questions.subject(request)} (for {who}, {age(waited)} ago)."
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    return f"⏰ Still waiting for a decision on {what} (asked by {who}, {age(waited)} ago)."


def escalation(
    request: ApprovalRequest, *, level: int, users: tuple[str, ...], usergroups: tuple[str, ...], waited: timedelta
) -> str:
    """An escalation rung, mentioning its targets."""
    targets = " ".join([*(mention_user(user) for user in users), *(mention_group(group) for group in usergroups)])
    if request.asks:
        asked = questions.subject(request)
        return f"🔔 Escalation, level {level}: {targets} — {asked} has waited {age(waited)} for an answer."
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    return f"🔔 Escalation, level {level}: {targets} — {what} has waited {age(waited)} for a decision."


def expired_kept() -> str:
    """Expiry with the ``keep`` outcome."""
    return "⌛ This request's time ran out; it stays open until someone decides."
