"""Approve and Discuss on an approval message (Deny and its modal: ``bot.slack.listeners.deny``).

An Approve click whose button carries its session is served before Bolt, at the edge (``bot.slack.clicks``);
this listener serves the others (older messages, Socket Mode).
"""

import logging
from typing import Any

from slack_bolt import Ack, App, Respond

from bot.render import action_ids as ids
from bot.render.action_ids import parse_button, parse_button_value
from bot.render.texts import answers, thread_posts
from bot.services import Services
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell
from bot.store.outbox import post_message

logger = logging.getLogger(__name__)


def register(app: App, services: Services) -> None:
    """Add the approval listeners to ``app``."""
    decisions = services.decisions

    def approve(ack: Ack, body: dict[str, Any], action: dict[str, Any], respond: Respond) -> None:
        ack()
        who = clicker(body)
        user, channel, thread_ts = who.user, who.channel, who.thread_ts
        approval_id, session_id, shown = parse_button(action["value"])
        try:
            outcome = decisions.decide(
                approval_id,
                session_id=session_id,
                user_id=user,
                kind="approve",
                reason=None,
                source="button",
                origin=click_origin(body),
                shown=shown,
            )
        except Exception as error:
            logger.exception("approval_id=<%s> | approve click failed", approval_id)
            respond(text=answers.click_failed(type(error).__name__), response_type="ephemeral", replace_original=False)
            return
        text = outcome_text(outcome)
        if text:
            tell(services.outbox, team_id=who.team, channel=channel, user=user, text=text, thread_ts=thread_ts)

    def discuss(ack: Ack, body: dict[str, Any], action: dict[str, Any]) -> None:
        ack()
        who = clicker(body)
        user, channel, thread_ts = who.user, who.channel, who.thread_ts
        approval = decisions.find(parse_button_value(action["value"])[0])
        refusal = decisions.may_discuss(approval, user_id=user, origin=click_origin(body)) if approval else None
        if approval is None or refusal is not None:
            text = (outcome_text(refusal) if refusal is not None else None) or answers.unknown_approval()
            tell(services.outbox, team_id=who.team, channel=channel, user=user, text=text, thread_ts=thread_ts)
            return
        request = approval.request
        prompt = post_message(
            request.channel_id,
            thread_posts.discussion_prompt(user),
            team_id=request.team_id,
            thread_ts=request.thread_ts,
        )
        services.outbox.send_later(prompt)

    app.action(ids.APPROVE_ACTION)(approve)
    app.action(ids.DISCUSS_ACTION)(discuss)
