"""Replies in a thread with open approvals: discussion that travels with the decision.

Replies are kept with the open requests whose message was posted before they were written. A
reply can also carry the decision (``approve: <reason>`` / ``deny: <reason>``) when exactly
one open approval was already posted when the reply was written (its message ts at or before
the reply's ts); with several, the buttons must say which, and a request posted after the reply
(a later round, say) is never decided by it. The decide script checks the ts again atomically.
Such a reply is the decision (its text the reason), never discussion: refused, it goes nowhere.
"""

import re
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from slack_bolt import App

from bot.domain.records import DiscussionEntry, session_id_for
from bot.flow.outcomes import Kind, Outcome
from bot.render.texts import answers
from bot.services import Services
from bot.slack.listeners.feedback import outcome_text, reply_origin, tell
from bot.store.approval_record import Approval, ApprovalDataError

_TYPED_DECISION: Final = re.compile(r"^\s*(approve|deny)\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)


def register(app: App, services: Services) -> None:
    """Add the thread listener to ``app``."""

    def on_message(body: dict[str, Any], event: dict[str, Any]) -> None:
        thread_ts = event.get("thread_ts")
        if not thread_ts or event.get("bot_id") or event.get("subtype") or "user" not in event:
            return
        if not services.event_deliveries.first(body.get("event_id") or f"{event['channel']}:{event['ts']}"):
            return  # Slack redelivered it: the reply is already with the approvals
        team_id = str(body.get("team_id") or event.get("team", ""))
        session_id = session_id_for(team_id, event["channel"], thread_ts)
        open_ids = sorted(services.approvals.open_ids(session_id))
        if not open_ids:
            return
        user, channel, written_at, text = event["user"], event["channel"], event["ts"], event.get("text", "")
        # Only requests whose message existed when the reply was written: a reply is never about a later one.
        seen = [
            approval_id
            for approval_id in open_ids
            if _posted_before(_load(services, session_id, approval_id), written_at)
        ]
        typed = _TYPED_DECISION.match(text)
        if typed is None:
            entry = DiscussionEntry(user=user, text=text, at=datetime.fromtimestamp(float(written_at), UTC))
            for approval_id in seen:
                services.approvals.add_discussion(session_id, approval_id, entry)
            return
        # A typed decision is never discussion: a refused one must not reach the agent either.
        if len(seen) != 1:
            answer = answers.several_open() if seen else answers.typed_decision_unseen()
            tell(services.outbox, team_id=team_id, channel=channel, user=user, text=answer, thread_ts=thread_ts)
            return
        kind: Kind = "approve" if typed.group(1).lower() == "approve" else "deny"
        outcome = services.decisions.decide(
            seen[0],
            user_id=user,
            kind=kind,
            reason=typed.group(2),
            source="reply",
            origin=reply_origin(body, event),
            written_at=written_at,
            with_request=True,  # the answer names the request it decided
        )
        feedback = _typed_feedback(outcome, kind)
        if feedback:
            tell(services.outbox, team_id=team_id, channel=channel, user=user, text=feedback, thread_ts=thread_ts)

    app.event("message")(on_message)


def _load(services: Services, session_id: str, approval_id: str) -> Approval | None:
    try:
        return services.approvals.get(session_id, approval_id)
    except ApprovalDataError:
        return None  # unreadable: it cannot be decided by a reply (its buttons answer why)


def _posted_before(approval: Approval | None, written_at: str) -> bool:
    """Whether the approval message existed when the reply was written (Slack ts, compared exactly)."""
    if approval is None or approval.request.message_ts is None:
        return False
    try:
        return Decimal(approval.request.message_ts) <= Decimal(written_at)
    except InvalidOperation:
        return False


def _typed_feedback(outcome: Outcome, kind: Kind) -> str | None:
    """Name the request a typed reply decided (or voted on); otherwise the usual refusal."""
    if outcome.status == "unseen":
        return answers.typed_decision_unseen()
    request = outcome.request
    if request is not None and outcome.status == "decided":
        return answers.typed_decision_applied(kind, request)
    if request is not None and outcome.status == "vote":
        return answers.typed_vote_counted(request, outcome.votes, request.policy.quorum)
    return outcome_text(outcome)
