"""Claim ("I'm looking"): pauses a request's escalation ladder and shows who is on it."""

from datetime import timedelta

from slack_bolt import Ack, App

from bot.render import action_ids as ids
from bot.render.action_ids import parse_button_value
from bot.render.texts import answers
from bot.services import Services
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell_clicker
from bot.slack.payloads import Action, BlockActions
from bot.store.outbox import update_approval


def register(app: App, services: Services) -> None:
    """Add the Claim listener to ``app``."""

    def claim(ack: Ack, body: BlockActions, action: Action) -> None:
        ack()
        who = clicker(body)
        approval_id, session_id = parse_button_value(action["value"])
        outcome = services.decisions.claim(
            approval_id, user_id=who.user, origin=click_origin(body), session_id=session_id
        )
        request = outcome.request
        if outcome.status == "claimed" and request is not None:
            services.stores.outbox.send_later(update_approval(request.session_id, request.approval_id))
            text = answers.claim_recorded(services.clock() + timedelta(seconds=request.policy.claim_pause_s or 0))
        else:
            text = outcome_text(outcome) or answers.unknown_approval()
        tell_clicker(services.stores.outbox, who, text)

    app.action(ids.CLAIM_ACTION)(claim)
