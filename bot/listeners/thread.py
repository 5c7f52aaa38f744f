"""Replies in a thread with open approvals: discussion that travels with the decision.

A reply can also carry the decision (``approve: <reason>`` / ``deny: <reason>``) when exactly
one approval is open in the thread; with several, the buttons must say which.
"""

import re
from datetime import UTC, datetime
from typing import Any, Final

from slack_bolt import App

from bot import messages
from bot.decisions import Kind
from bot.listeners.feedback import outcome_text, tell
from bot.listeners.requests import first_delivery
from bot.model import DiscussionEntry
from bot.runner import session_id_for
from bot.services import Services

_TYPED_DECISION: Final = re.compile(r"^\s*(approve|deny)\s*:\s*(.*)$", re.IGNORECASE | re.DOTALL)


def register(app: App, services: Services) -> None:
    """Add the thread listener to ``app``."""

    def on_message(body: dict[str, Any], event: dict[str, Any]) -> None:
        thread_ts = event.get("thread_ts")
        if not thread_ts or event.get("bot_id") or event.get("subtype") or "user" not in event:
            return
        if not first_delivery(services, body.get("event_id") or f"{event['channel']}:{event['ts']}"):
            return  # Slack redelivered it: the reply is already with the approvals
        session_id = session_id_for(body.get("team_id") or event.get("team", ""), event["channel"], thread_ts)
        open_ids = sorted(services.approvals.open_ids(session_id))
        if not open_ids:
            return
        text = event.get("text", "")
        entry = DiscussionEntry(user=event["user"], text=text, at=datetime.fromtimestamp(float(event["ts"]), UTC))
        for approval_id in open_ids:
            services.approvals.add_discussion(session_id, approval_id, entry)
        typed = _TYPED_DECISION.match(text)
        if typed is None:
            return
        user, channel = event["user"], event["channel"]
        if len(open_ids) > 1:
            tell(services.outbox, channel=channel, user=user, text=messages.several_open(), thread_ts=thread_ts)
            return
        kind: Kind = "approve" if typed.group(1).lower() == "approve" else "deny"
        outcome = services.decisions.decide(open_ids[0], user_id=user, kind=kind, reason=typed.group(2), source="reply")
        feedback = outcome_text(outcome)
        if feedback:
            tell(services.outbox, channel=channel, user=user, text=feedback, thread_ts=thread_ts)

    app.event("message")(on_message)
