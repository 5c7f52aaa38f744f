"""A question's options: a click on an option's button answers with it; Send answer sends what its select holds.

Either is one run of the decide script, which checks the options against the question (a forged index, or an answer
to a question that offers none, records nothing: ``wrong_action``) and records their labels. Choosing in the select
only marks the choice (Slack keeps it in the message's state until Send answer).
"""

import re
from typing import Any

from slack_bolt import Ack, App

from bot.domain.status import Status
from bot.flow.decisions import DecisionService
from bot.flow.outcomes import Outcome
from bot.render import action_ids as ids
from bot.render.texts import questions
from bot.slack.edge.after_answer import after_answer
from bot.slack.edge.payloads import Action, BlockActions
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell_clicker
from bot.store.queues.outbox import Outbox

_CHOOSE: re.Pattern[str] = re.compile(f"^{re.escape(ids.CHOOSE_PREFIX)}[0-9]+$")


def register(app: App, *, decisions: DecisionService, outbox: Outbox) -> None:
    """Add the listeners of a question's options to ``app``."""

    def answer(body: BlockActions, approval_id: str, session_id: str | None, choices: tuple[int, ...]) -> None:
        who = clicker(body)
        if not choices:
            tell_clicker(outbox, who, questions.nothing_chosen())
            return
        outcome = decisions.decide(
            approval_id,
            session_id=session_id,
            user_id=who.user,
            kind="answer",
            reason=None,
            source="button",
            origin=click_origin(body),
            choices=choices,
            with_request=True,  # the confirmation names the question
        )
        answered = answered_text(outcome)
        if answered is not None:  # a confirmation: it waits until the click is answered
            after_answer(lambda: tell_clicker(outbox, who, answered))
            return
        text = outcome_text(outcome)
        if text:
            tell_clicker(outbox, who, text)

    def choose(ack: Ack, body: BlockActions, action: Action) -> None:
        ack()
        parsed = ids.parse_choice_button_value(str(action.get("value", "")))
        if parsed is None:
            tell_clicker(outbox, clicker(body), questions.wrong_action())
            return
        index, approval_id, session_id = parsed
        answer(body, approval_id, session_id, (index,))

    def send_choice(ack: Ack, body: BlockActions, action: Action) -> None:
        ack()
        approval_id, session_id = ids.parse_button_value(str(action.get("value", "")))
        chosen = selected(body, action)
        if chosen is None:
            tell_clicker(outbox, clicker(body), questions.wrong_action())
            return
        answer(body, approval_id, session_id, chosen)

    def marked(ack: Ack) -> None:
        ack()  # the choice waits in the message's state for Send answer

    app.action(_CHOOSE)(choose)
    app.action(ids.SEND_CHOICE_ACTION)(send_choice)
    app.action(ids.CHOICE_SELECT)(marked)


def is_choice(action_id: str) -> bool:
    """Whether ``action_id`` is an option's button of a question."""
    return _CHOOSE.fullmatch(action_id) is not None


def answered_text(outcome: Outcome) -> str | None:
    """The answerer's confirmation, when their answer was recorded."""
    request = outcome.request
    return questions.answer_sent(request) if outcome.status is Status.DECIDED and request is not None else None


def selected(body: BlockActions, action: Action) -> tuple[int, ...] | None:
    """The option indexes the select beside the clicked button holds (``None``: an option value that is no index).

    Slack sends what the message's inputs hold as the click's ``state`` (on the App Home, the view's).
    """
    state = body.get("state") or (body.get("view") or {}).get("state") or {}
    values = state.get("values") if isinstance(state, dict) else None
    block = values.get(str(action.get("block_id", ""))) if isinstance(values, dict) else None
    element = block.get(ids.CHOICE_SELECT) if isinstance(block, dict) else None
    if not isinstance(element, dict):
        return ()
    options: Any = element.get("selected_options")
    if options is None:
        options = [element["selected_option"]] if element.get("selected_option") else []
    if not isinstance(options, list):
        return None
    indexes: list[int] = []
    for option in options:
        index = ids.parse_choice_index(str(option.get("value", ""))) if isinstance(option, dict) else None
        if index is None:
            return None
        indexes.append(index)
    return tuple(indexes)
