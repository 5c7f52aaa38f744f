"""The texts of a question: its message (what the agent asks, of whom, the answer once given) and its answer form.

Functions return Slack mrkdwn unless their name or docstring says plain text.
"""

import json
from typing import Any, Final

from bot.domain.records import ApprovalRequest, Decision, PolicySummary, Question
from bot.render.safe_text import MAX_DECISION_REASON, clip, code_inline
from bot.render.texts.approval_request import approvers_text, asker, who_decided
from bot.render.texts.times import slack_date

QUESTION_MAX: Final = 2_900
"""Characters of the question a message shows (a section holds 3,000 with its label)."""
ANSWER_MAX: Final = 2_000
"""The longest answer the form takes (what the agent reads; a decided message shows it whole)."""

# Labels (plain text; buttons far below 75 characters, the form's below 24).
QUESTION_HEADER: Final = "Question from the agent"
ANSWER_LABEL: Final = "Answer"
ANSWER_MODAL_TITLE: Final = "Answer the agent"
ANSWER_MODAL_SUBMIT: Final = "Send answer"
ANSWER_MODAL_CLOSE: Final = "Cancel"
ANSWER_INPUT_LABEL: Final = "Your answer"
ANSWER_PLACEHOLDER: Final = "The agent reads exactly what you write here."
FORM_LABEL: Final = "Fill in"
OTHER_LABEL: Final = "Other…"
"""Beside a question's options, when it lets the person answer in words instead."""
SEND_CHOICE_LABEL: Final = "Send answer"
CHOOSE_ONE_PLACEHOLDER: Final = "Choose an answer"
CHOOSE_SEVERAL_PLACEHOLDER: Final = "Choose one or more"
_LISTED_MAX: Final = 2_900  # the options listed beside their buttons: one section


def question_header(request: ApprovalRequest) -> str:
    """The message's header (plain text): from the agent, or from the API client that asked."""
    if request.client is None:
        return QUESTION_HEADER
    return f"Question from {request.client} (API)"


def question_intro(request: ApprovalRequest) -> str:
    """Who the agent works for (or which API client asks, for whom), before the question itself."""
    if request.client is not None:
        return f"{asker(request)} asks:"
    tool = f" (through {code_inline(request.tool)})" if request.tool else ""
    return f"The agent working on {asker(request)}'s request asks{tool}:"


def question_text(request: ApprovalRequest) -> str:
    """The question, as a quote: escaped, hidden characters shown, within a section."""
    text = request.question.text if request.question is not None else ""
    return "\n".join(f"> {line}" for line in clip(text, QUESTION_MAX).split("\n"))


def how_to_answer(question: Question, *, by_reply: bool = True) -> str:
    """How the question is answered (one context line); ``by_reply``: a reply in its thread answers it too.

    Only an agent's thread takes replies as answers: a question asked through the HTTP API lives in no agent's session.
    """
    if question.kind == "choice":
        chosen = "Choose one or more of the options" if question.multiple else "Choose one of the options"
        return f"{chosen}, or *{OTHER_LABEL}* to answer in your own words" if question.other else chosen
    if question.kind == "form":
        return "Answer with the form: *Fill in*"
    return "Answer with *Answer*, or by replying in this thread" if by_reply else "Answer with *Answer*"


def not_offered(problem: str) -> str:
    """Why the question is asked in words, though the agent offered options or a form (one context line)."""
    return f"⚠️ What the agent offered with this question could not be shown ({clip(problem, 300)}): answer in words."


def options_listed(question: Question) -> str | None:
    """The options with their descriptions, beside their buttons (``None``: none has a description)."""
    if not any(option.description for option in question.options):
        return None
    lines = [
        f"• *{clip(option.label, 100)}*" + (f": {clip(option.description, 100)}" if option.description else "")
        for option in question.options
    ]
    return clip_lines(lines, _LISTED_MAX)


def clip_lines(lines: list[str], limit: int) -> str:
    """Lines (already escaped) joined, as many as fit ``limit`` characters, then how many were left out."""
    shown: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        if used + len(line) + 1 > limit - 20:
            shown.append(f"…and {len(lines) - index} more")
            break
        shown.append(line)
        used += len(line) + 1
    return "\n".join(shown)


def answer_as_text(answer: str | list[str] | dict[str, Any]) -> str:
    """An answer on one line of text (not yet escaped): its words, its labels, or its object as JSON."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, list):
        return ", ".join(answer)
    return json.dumps(answer, ensure_ascii=False, sort_keys=True)


def nothing_chosen() -> str:
    """Ephemeral answer to Send answer with no option chosen."""
    return "Choose an option first, then send your answer. Nothing was sent."


def who_answers(policy: PolicySummary) -> str:
    """Who may answer (one context line)."""
    return f"May answer: {approvers_text(policy)} · The first answer is sent to the agent"


def answer_status(decision: Decision) -> str:
    """The outcome, as the answered (or unanswered) message shows it."""
    at = slack_date(decision.decided_at)
    if decision.decision == "answer":
        return f"💬 Answered by {who_decided(decision.decided_by)} at {at}:"
    if decision.by_rule is not None:
        return f"🚫 Refused by rule {code_inline(decision.by_rule)} at {at}: nobody was asked"
    if decision.decision == "deny":
        why = f": {clip(decision.reason, MAX_DECISION_REASON)}" if decision.reason else ""
        return f"🚫 Taken back at {at}, unanswered{why}"
    why = f" ({clip(decision.reason, MAX_DECISION_REASON)})" if decision.reason else ""
    return f"⌛ Nobody answered in time: the agent was told there is no answer{why} · {at}"


def answer_quote(decision: Decision) -> str | None:
    """The answer the agent received, as a quote (``None``: not answered).

    Words as written; the labels chosen, one a line; a form's object as JSON in a code block.
    """
    answer = decision.answer
    if decision.decision != "answer" or answer is None:
        return None
    if isinstance(answer, list):
        return clip_lines([f"> • {clip(label, 100)}" for label in answer], ANSWER_MAX + 100)
    if isinstance(answer, dict):
        # Backticks would end the block early: shown as quotes (the agent has the object as given).
        shown = json.dumps(answer, ensure_ascii=False, indent=2).replace("`", "'")
        return f"```{clip(shown, ANSWER_MAX + 100)}```"
    return "\n".join(f"> {line}" for line in clip(answer, ANSWER_MAX + 100).split("\n"))


def question_fallback(request: ApprovalRequest, decision: Decision | None = None) -> str:
    """Notification text of the question's message (shown where blocks are not)."""
    asked = request.question.text if request.question is not None else ""
    who = f"the agent for {asker(request)}" if request.client is None else asker(request)
    text = f"Question from {who}: {clip(asked, 300)}"
    return text if decision is None else f"{text} · {answer_status(decision)}"


def answer_modal_intro(request: ApprovalRequest) -> str:
    """The answer form's first line (mrkdwn), then the question (or, for an approval, what answering does)."""
    if request.question is None:
        what = code_inline(request.tool or request.interrupt_name)
        to = code_inline(request.client) if request.client is not None else "the agent"
        return f"Answer {asker(request)}'s request {what} in words instead of deciding it: {to} receives your words"
    if request.client is not None:
        return f"{question_intro(request)}\n{question_text(request)}"
    return f"The agent working on {asker(request)}'s request asks:\n{question_text(request)}"


def subject(request: ApprovalRequest) -> str:
    """The question, named in one line (reminders, escalations, answers to a person)."""
    if request.question is None:  # an approval answered in words instead
        return f"the request {code_inline(request.tool or request.interrupt_name)}"
    return f"the question {code_inline(request.question.text.replace(chr(10), ' '), 120)}"


def answer_sent(request: ApprovalRequest) -> str:
    """Ephemeral confirmation: the person's answer (by form or typed reply) went to the agent."""
    to = "the agent" if request.client is None else code_inline(request.client)
    return f"Your answer to {subject(request)} was sent to {to}."


def not_asked_of_you(who: str) -> str:
    """Ephemeral answer to someone the question is not asked of (``who``: ``approvers_text``)."""
    return f"This question is not for you: only {who} may answer it."


def wrong_action() -> str:
    """Ephemeral answer to an action that does not fit the request (a forged or stale button)."""
    return (
        "That does not fit this request: a question is answered as it asks (in words, with one of its options, "
        "or with its form), an approval is approved or denied. Nothing changed."
    )


def blank_answer() -> str:
    """Form error (plain text) for an answer with nothing in it."""
    return "Please write an answer: the agent reads exactly what you send."
