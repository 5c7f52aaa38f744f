"""Every button of an approval message, answered: one ``ApprovalAction`` per ``bot.render.controls.Control``.

An entry says what the button asks the judge (who may), which flow serves it and whether it opens a modal (then it
is acked at once and served lazily). ``register`` adds every id a control's clicks may carry (older ids too), and
last a listener for any other ``signoff_`` id: a button this version does not know is answered, never silent.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.render import controls
from bot.render.action_ids import parse_button_value
from bot.render.controls import Control
from bot.render.texts import answers
from bot.services import Services
from bot.slack import clicks
from bot.slack.listeners import deny, edits, grants, questions, similar_grants
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell_clicker
from bot.slack.listeners.lazy import lazily
from bot.slack.payloads import Action, BlockActions

Handler = Callable[[BlockActions, Action], None]
"""Serves a click already acked."""
Opener = Callable[[BlockActions, Action, WebClient], None]
"""Opens a modal for a click (run lazily, after the ack: ``views.open`` may outlast Slack's 3 seconds)."""
Asks = Literal["approve", "deny", "answer", "discuss"]
"""What the click asks the judge of the person: may they approve, deny, answer or discuss this request from there."""

PREFIX: Final = "signoff_"
"""Every action id of the bot begins so (``bot.render.action_ids``)."""


def _take(services: Services) -> Handler:
    attending, outbox = services.attending, services.stores.outbox

    def take(body: BlockActions, action: Action) -> None:
        who = clicker(body)
        approval_id, session_id = parse_button_value(action["value"])
        taken = attending.take(approval_id, user_id=who.user, origin=click_origin(body), session_id=session_id)
        if taken.until is not None:
            text = answers.take_recorded(taken.until)
        else:
            text = outcome_text(taken.outcome) or answers.unknown_approval()
        tell_clicker(outbox, who, text)

    return take


def _discuss(services: Services) -> Handler:
    attending, outbox = services.attending, services.stores.outbox

    def discuss(body: BlockActions, action: Action) -> None:
        who = clicker(body)
        approval_id, session_id = parse_button_value(action["value"])
        refusal = attending.discuss(approval_id, user_id=who.user, origin=click_origin(body), session_id=session_id)
        if refusal is not None:
            tell_clicker(outbox, who, outcome_text(refusal) or answers.unknown_approval())

    return discuss


@dataclass(frozen=True, kw_only=True)
class ApprovalAction:
    """One button of an approval message, as the app answers it.

    Attributes:
        control: The button (its ids, label, when it shows: ``bot.render.controls``).
        asks: The judge's question. Its flow call asks it of the one judge, the decide script (deciding, or as a check
            that writes nothing: ``DecisionService.find_checked``); it is written here so that a new button says who
            may in its one entry.
        serves: Makes, from the services, what serves its clicks once acked (the flow call, what the clicker is told).
        opens: Makes what opens its modal instead (lazily, after the ack).
    """

    control: Control
    asks: Asks
    serves: Callable[[Services], Handler] | None = None
    opens: Callable[[Services], Opener] | None = None

    def register(self, app: App, services: Services) -> None:
        """Add the listener of every id this button's clicks may carry."""
        for action_id in self.control.action_ids:
            if self.opens is not None:
                lazily(app.action(action_id), self.opens(services), outbox=services.stores.outbox)
            elif self.serves is not None:
                app.action(action_id)(_acked(self.serves(services)))


def _acked(handle: Handler) -> Callable[[Ack, BlockActions, Action], None]:
    def listener(ack: Ack, body: BlockActions, action: Action) -> None:
        ack()
        handle(body, action)

    listener.__name__ = listener.__qualname__ = handle.__name__  # Bolt names the listener it runs in its logs
    return listener


ACTIONS: Final = (
    ApprovalAction(control=controls.APPROVE, asks="approve", serves=clicks.approving),
    ApprovalAction(control=controls.DENY, asks="deny", opens=deny.opening),
    ApprovalAction(control=controls.TRUST, asks="approve", serves=clicks.approving),
    ApprovalAction(control=controls.EDIT, asks="approve", opens=edits.opening),
    ApprovalAction(control=controls.ANSWER_INSTEAD, asks="answer", opens=questions.opening),
    ApprovalAction(control=controls.DISCUSS, asks="discuss", serves=_discuss),
    ApprovalAction(control=controls.TAKE, asks="approve", serves=_take),
    ApprovalAction(control=controls.APPROVE_AND_ALLOW, asks="approve", serves=grants.approving_and_allowing),
    ApprovalAction(control=controls.ALLOW_SIMILAR, asks="approve", opens=similar_grants.opening),
)
"""Every button of an approval message (``controls.CONTROLS``), each with how it is answered."""


def register(app: App, services: Services) -> None:
    """Add the listeners of every approval message's button to ``app``."""
    for each in ACTIONS:
        each.register(app, services)


def register_unknown(app: App, services: Services) -> None:
    """Add the listener that answers a click on a ``signoff_`` button no other listener knows (register it last)."""
    outbox = services.stores.outbox

    def unknown_button(ack: Ack, body: BlockActions) -> None:
        ack()
        tell_clicker(outbox, clicker(body), answers.button_unknown())

    app.action(re.compile(f"^{re.escape(PREFIX)}"))(unknown_button)
