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

from bot.flow.attending import Attending
from bot.render import controls
from bot.render.action_ids import parse_button_value
from bot.render.controls import Control
from bot.render.texts import answers
from bot.slack.edge import clicks
from bot.slack.edge.payloads import Action, BlockActions
from bot.slack.listeners import deny, edits, grants, questions, similar_grants
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell_clicker
from bot.slack.listeners.lazy import lazily
from bot.slack.parts import SlackParts
from bot.store.queues.outbox import Outbox

Handler = Callable[[BlockActions, Action], None]
"""Serves a click already acked."""
Opener = Callable[[BlockActions, Action, WebClient], None]
"""Opens a modal for a click (run lazily, after the ack: ``views.open`` may outlast Slack's 3 seconds)."""
Asks = Literal["approve", "deny", "answer", "discuss"]
"""What the click asks the judge of the person: may they approve, deny, answer or discuss this request from there."""

PREFIX: Final = "signoff_"
"""Every action id of the bot begins so (``bot.render.action_ids``)."""


def _take(*, attending: Attending, outbox: Outbox) -> Handler:

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


def _discuss(*, attending: Attending, outbox: Outbox) -> Handler:

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
        serves: Makes, from the parts it names, what serves its clicks once acked (the flow call, what the clicker is
            told).
        opens: Makes what opens its modal instead (lazily, after the ack).
    """

    control: Control
    asks: Asks
    serves: Callable[[SlackParts], Handler] | None = None
    opens: Callable[[SlackParts], Opener] | None = None

    def register(self, app: App, parts: SlackParts) -> None:
        """Add the listener of every id this button's clicks may carry."""
        for action_id in self.control.action_ids:
            if self.opens is not None:
                lazily(app.action(action_id), self.opens(parts), outbox=parts.stores.outbox)
            elif self.serves is not None:
                app.action(action_id)(_acked(self.serves(parts)))


def _acked(handle: Handler) -> Callable[[Ack, BlockActions, Action], None]:
    def listener(ack: Ack, body: BlockActions, action: Action) -> None:
        ack()
        handle(body, action)

    listener.__name__ = listener.__qualname__ = handle.__name__  # Bolt names the listener it runs in its logs
    return listener


def _approving(parts: SlackParts) -> Handler:
    return clicks.approving(decisions=parts.decisions, outbox=parts.stores.outbox)


ACTIONS: Final = (
    ApprovalAction(control=controls.APPROVE, asks="approve", serves=_approving),
    ApprovalAction(
        control=controls.DENY,
        asks="deny",
        opens=lambda p: deny.opening(decisions=p.decisions, outbox=p.stores.outbox, modals=p.modals),
    ),
    ApprovalAction(control=controls.TRUST, asks="approve", serves=_approving),
    ApprovalAction(
        control=controls.EDIT,
        asks="approve",
        opens=lambda p: edits.opening(flow=p.edit_flow, outbox=p.stores.outbox, modals=p.modals),
    ),
    ApprovalAction(
        control=controls.ANSWER_INSTEAD,
        asks="answer",
        opens=lambda p: questions.opening(decisions=p.decisions, modals=p.modals, outbox=p.stores.outbox),
    ),
    ApprovalAction(
        control=controls.DISCUSS,
        asks="discuss",
        serves=lambda p: _discuss(attending=p.attending, outbox=p.stores.outbox),
    ),
    ApprovalAction(
        control=controls.TAKE, asks="approve", serves=lambda p: _take(attending=p.attending, outbox=p.stores.outbox)
    ),
    ApprovalAction(
        control=controls.APPROVE_AND_ALLOW,
        asks="approve",
        serves=lambda p: grants.approving_and_allowing(flow=p.grant_flow, outbox=p.stores.outbox),
    ),
    ApprovalAction(
        control=controls.ALLOW_SIMILAR,
        asks="approve",
        opens=lambda p: similar_grants.opening(flow=p.grant_flow, outbox=p.stores.outbox, modals=p.modals),
    ),
)
"""Every button of an approval message (``controls.CONTROLS``), each with how it is answered."""


def register(app: App, parts: SlackParts) -> None:
    """Add the listeners of every approval message's button to ``app``."""
    for each in ACTIONS:
        each.register(app, parts)


def register_unknown(app: App, *, outbox: Outbox) -> None:
    """Add the listener that answers a click on a ``signoff_`` button no other listener knows (register it last)."""

    def unknown_button(ack: Ack, body: BlockActions) -> None:
        ack()
        tell_clicker(outbox, clicker(body), answers.button_unknown())

    app.action(re.compile(f"^{re.escape(PREFIX)}"))(unknown_button)
