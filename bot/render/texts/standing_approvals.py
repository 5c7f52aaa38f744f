"""The texts of standing approvals.

The "Approve + allow" button and its confirmation, the "allow similar" modal, a grant's line, revoking it.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from bot.domain.records import ApprovalRequest
from bot.render.safe_text import MAX_ID, code_inline, escape, mention_user
from bot.render.texts.times import for_duration, slack_date

REVOKE_LABEL: Final = "Revoke"
APPROVE_AND_ALLOW_LABEL: Final = "Approve + allow"
ALLOW_SIMILAR_LABEL: Final = "Approve + allow similar…"
SIMILAR_TITLE: Final = "Allow similar calls"
SIMILAR_SUBMIT: Final = "Approve and allow"
SIMILAR_FIELDS_LABEL: Final = "Same value required for"
SIMILAR_DURATION_LABEL: Final = "How long"
NO_FIELD: Final = "Tick at least one field: a standing approval never covers every call of a tool."
NO_DURATION: Final = "Choose one of the durations offered."
ANY_OTHER_ARGUMENTS: Final = " (any other arguments)"
"""After the pinned fields of an "allow similar" grant: the others may be anything."""


def approve_and_allow_label(seconds: int) -> str:
    """The button that approves and makes a standing approval (plain text, at most 75 characters)."""
    return f"{APPROVE_AND_ALLOW_LABEL} {for_duration(seconds)}"


def similar_intro(request: ApprovalRequest) -> str:
    """What the "allow similar" modal offers (mrkdwn)."""
    tool = code_inline(request.tool or request.interrupt_name)
    channel = f"<#{escape(request.channel_id[:MAX_ID])}>"
    return (
        f"Approve this call, and for a while let {tool} run in {channel} without asking when the fields you tick "
        "have the values they have here. The fields you leave unticked may be anything."
    )


def similar_whose(request: ApprovalRequest) -> str:
    """Whose calls the "allow similar" grant covers (mrkdwn)."""
    if request.policy.grant_scope == "channel":
        return "It covers such calls asked by anyone in the channel, never your own. Revoke it on App Home."
    asker = mention_user(request.requested_by) if request.requested_by else "this requester"
    return f"It covers such calls asked by {asker} only. Revoke it on App Home."


def similar_duration(seconds: int) -> str:
    """A duration the "allow similar" modal offers (plain text)."""
    return f"for {for_duration(seconds)}"


def approve_and_allow_confirm(request: ApprovalRequest, seconds: int) -> str:
    """What the person confirms before a standing approval is made (mrkdwn).

    Every part is bounded, so the whole stays within a confirm dialog's 300 characters.
    """
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


GRANT_REVOKING: Final = (
    "\n:hourglass_flowing_sand: *Revoking…* not finished: it approves no new call, but one it was approving could not"
    " be stopped yet. Press Revoke again, or Signoff finishes it on its own."
)
"""After the line of a standing approval whose revoke is not finished (App Home)."""


def grant_revoked(tool: str) -> str:
    """Told to the person who revoked a standing approval."""
    return f"Revoked: every {code_inline(tool)} call it has not approved yet is asked again."


def grant_revoke_unfinished(tool: str) -> str:
    """Told to the person who revoked a standing approval whose calls in flight could not all be stopped yet."""
    return (
        f"Not revoked yet: it approves no new {code_inline(tool)} call, but one it was approving could not be stopped "
        "yet. It stays on App Home until that is done: Signoff tries again on its own, or press Revoke again."
    )


def grant_gone() -> str:
    """A Revoke click on a standing approval that ended already."""
    return "That standing approval has ended already."


def trust_line(*, tool: str, channel_id: str, thread_ts: str, trusted_by: str, since: datetime) -> str:
    """One tool trusted for the rest of a session, on App Home (the session is its thread)."""
    where = f"<#{escape(channel_id[:MAX_ID])}>, thread {escape(thread_ts[:MAX_ID])}"
    return (
        f"{code_inline(tool)} trusted for the rest of the agent's session in {where} · "
        f"by {mention_user(trusted_by)} {slack_date(since)} · any arguments"
    )


def trust_revoked(tool: str) -> str:
    """Told to the person who revoked a trust."""
    return f"Revoked: the agent asks again before its next {code_inline(tool)} call in that session."


def trust_gone() -> str:
    """A Revoke click on a trust that ended already (or that is not theirs to end)."""
    return "That trust has ended already, or it is not yours to end."


def grant_not_for_edited() -> str:
    """An "Approve + allow" of an edited call (its message offers none; nothing was recorded)."""
    return (
        "A standing approval is not offered for an edited call: nothing was recorded. "
        "Use Approve to approve the edited call once."
    )
