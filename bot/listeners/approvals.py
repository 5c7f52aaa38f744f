"""Approve, Deny (with its modal) and Discuss on an approval message."""

import logging
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from bot import blocks, ids, messages
from bot.listeners.feedback import clicker, outcome_text, tell
from bot.outbox import OutboxEntry
from bot.services import Services

logger = logging.getLogger(__name__)


def register(app: App, services: Services) -> None:
    """Add the approval listeners to ``app``."""
    decisions = services.decisions

    def approve(ack: Ack, body: dict[str, Any], action: dict[str, Any], respond: Respond) -> None:
        ack()
        who = clicker(body)
        user, channel, thread_ts = who.user, who.channel, who.thread_ts
        try:
            outcome = decisions.decide(action["value"], user_id=user, kind="approve", reason=None, source="button")
        except Exception as error:
            logger.exception("approval_id=<%s> | approve click failed", action.get("value"))
            respond(text=messages.click_failed(type(error).__name__), response_type="ephemeral", replace_original=False)
            return
        text = outcome_text(outcome)
        if text:
            tell(services.outbox, channel=channel, user=user, text=text, thread_ts=thread_ts)

    def ack_only(ack: Ack) -> None:
        ack()

    def open_deny_modal(body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        who = clicker(body)
        user, channel, thread_ts = who.user, who.channel, who.thread_ts
        approval = decisions.find(action["value"])
        refusal = decisions.check(approval, user_id=user) if approval is not None else None
        if approval is None or refusal is not None:
            text = outcome_text(refusal) if refusal is not None else messages.unknown_approval()
            tell(
                services.outbox,
                channel=channel,
                user=user,
                text=text or messages.unknown_approval(),
                thread_ts=thread_ts,
            )
            return
        view = blocks.deny_modal(approval.request, reason_required=approval.request.policy.reason_required_on_deny)
        client.views_open(trigger_id=body["trigger_id"], view=view)

    def submit_deny(ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = body["user"]["id"]
        values = view.get("state", {}).get("values", {})
        reason = (values.get(ids.DENY_REASON_BLOCK, {}).get(ids.DENY_REASON_INPUT) or {}).get("value")
        outcome = decisions.decide(view["private_metadata"], user_id=user, kind="deny", reason=reason, source="modal")
        text = outcome_text(outcome)
        if text:
            ack(**blocks.modal_errors(text))
        else:
            ack()

    def discuss(ack: Ack, body: dict[str, Any], action: dict[str, Any]) -> None:
        ack()
        who = clicker(body)
        user, channel, thread_ts = who.user, who.channel, who.thread_ts
        approval = decisions.find(action["value"])
        if approval is None:
            tell(services.outbox, channel=channel, user=user, text=messages.unknown_approval(), thread_ts=thread_ts)
            return
        payload = {
            "channel": approval.request.channel_id,
            "thread_ts": approval.request.thread_ts,
            "text": messages.discussion_prompt(user),
        }
        services.outbox.send_later(OutboxEntry("post_message", payload))

    app.action(ids.APPROVE_ACTION)(approve)
    app.action(ids.DENY_ACTION)(ack=ack_only, lazy=[open_deny_modal])
    app.action(ids.DISCUSS_ACTION)(discuss)
    app.view(ids.DENY_MODAL_CALLBACK)(submit_deny)
