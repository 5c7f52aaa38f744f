"""Discuss on an approval message: a prompt in the request's thread.

Approve: ``bot.slack.clicks``; Deny: ``bot.slack.listeners.deny``.
"""

from slack_bolt import Ack, App

from bot.render import action_ids as ids
from bot.render.action_ids import parse_button_value
from bot.render.texts import answers, thread_posts
from bot.services import Services
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell_clicker
from bot.slack.payloads import Action, BlockActions
from bot.store.outbox import post_message


def register(app: App, services: Services) -> None:
    """Add the Discuss listener to ``app``."""
    decisions = services.decisions

    def discuss(ack: Ack, body: BlockActions, action: Action) -> None:
        ack()
        who = clicker(body)
        user = who.user
        approval, refusal = decisions.find_checked(
            parse_button_value(action["value"])[0], user_id=user, action="discuss", origin=click_origin(body)
        )
        if approval is None or refusal is not None:
            text = outcome_text(refusal) or answers.unknown_approval()
            tell_clicker(services.stores.outbox, who, text)
            return
        request = approval.request
        prompt = post_message(
            request.channel_id,
            thread_posts.discussion_prompt(user),
            team_id=request.team_id,
            thread_ts=request.thread_ts,
        )
        services.stores.outbox.send_later(prompt)

    app.action(ids.DISCUSS_ACTION)(discuss)
