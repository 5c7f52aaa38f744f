"""The texts of App Home (the viewer's queue, standing approvals, recent decisions) and of the ``/approvals`` answer."""

from datetime import datetime
from typing import Final

from bot.domain.records import ApprovalRequest, Decision
from bot.render.safe_text import MAX_INLINE_ARGUMENTS, code_inline, mention_user
from bot.render.texts import questions
from bot.render.texts.approval_request import asker, decision_status
from bot.render.texts.times import age

HOME_QUEUE_TITLE: Final = "Waiting for your decision"
HOME_GRANTS_TITLE: Final = "Standing approvals"
HOME_RECENT_TITLE: Final = "Recent decisions"


def home_queue_empty() -> str:
    """The App Home queue with nothing in it."""
    return "Nothing is waiting for you. 🎉"


def home_grants_empty() -> str:
    """App Home with no standing approvals of the viewer's."""
    return "None: approve with “Approve + allow” where a rule offers it."


def home_more_grants(hidden: int) -> str:
    """More standing approvals than the tab shows (soonest to end first)."""
    return f"…and {hidden} more, ending later: python -m bot grants lists them all."


def home_recent_empty() -> str:
    """The App Home with no decisions yet."""
    return "No decisions yet."


def home_more(hidden: int, *, at_least: bool = False) -> str:
    """More requests than the tab shows (``at_least``: more still, beyond what was read)."""
    return f"…and {hidden}{'+' if at_least else ''} more, oldest first above."


def home_item_status(request: ApprovalRequest, *, now: datetime, level: int, taken_by: str | None) -> str:
    """Age, escalation level and who took a request in someone's queue."""
    parts = [f"waiting {age(now - request.created_at)}", f"in <#{request.channel_id}>"]
    if level:
        parts.append(f"escalation level {level}")
    if taken_by:
        parts.append(f"claimed by {mention_user(taken_by)}")
    return " · ".join(parts)


def home_recent_line(request: ApprovalRequest, decision: Decision, arguments: str) -> str:
    """One recent decision on the App Home; ``arguments``: the call's as it ran (an edit's), as inline code."""
    if request.asks:
        answered = ""
        if decision.answer is not None:
            answered = f" {code_inline(questions.answer_as_text(decision.answer), MAX_INLINE_ARGUMENTS)}"
        return f"{questions.subject(request)}: {questions.answer_status(decision)}{answered}"
    what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    edited = ""
    if decision.updated_input is not None:
        edited = f" (✏️ edited by {mention_user(decision.edited_by)})" if decision.edited_by else " (✏️ edited)"
    return f"{what} {arguments}{edited}: {decision_status(decision)}"


def pending_header(count: int, *, listed: int | None = None) -> str:
    """Heading of the ``/approvals`` answer: ``count`` waiting, of which the ``listed`` oldest are read (all: None)."""
    showing = f" (showing the {listed} oldest)" if listed is not None and listed < count else ""
    return f"*{count} request{'s' if count != 1 else ''} waiting for a decision in this channel{showing}:*"


def pending_line(request: ApprovalRequest, *, now: datetime, link: str | None) -> str:
    """One pending request in the ``/approvals`` answer."""
    if request.asks:
        what = questions.subject(request)
    else:
        what = code_inline(request.tool) if request.tool else code_inline(request.interrupt_name)
    where = f" — <{link}|open>" if link else ""
    return f"• {what} asked by {asker(request)}, waiting {age(now - request.created_at)}{where}"


def nothing_pending() -> str:
    """``/approvals`` when nothing waits."""
    return "Nothing is waiting for a decision in this channel."


MAX_PENDING_TEXT: Final = 30_000  # well within the 40,000 characters Slack takes as a message's text


def pending_list(lines: list[str], *, waiting: int | None = None) -> str:
    """The ``/approvals`` answer: the header and the ``pending_line``s that fit, then how many more wait.

    ``waiting``: how many wait in all, when ``lines`` lists only the oldest of them (None: all).
    """
    if not lines:
        return nothing_pending()
    waiting = max(waiting or 0, len(lines))
    shown = [pending_header(waiting, listed=len(lines))]
    used = len(shown[0])
    for index, line in enumerate(lines):
        if used + 1 + len(line) > MAX_PENDING_TEXT:
            shown.append(home_more(waiting - index))
            break
        shown.append(line)
        used += 1 + len(line)
    return "\n".join(shown)
