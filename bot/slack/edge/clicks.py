"""Approve clicks ("Approve and trust" and a question's options too), served at the edge or else by Bolt's listener.

An Approve button carries its approval's session (``bot.render.action_ids.button_value``), so a
click is one Redis round trip before its answer (two while traces are recorded: its approval's trace is read
first, ``bot.observe.tracing``): it is served at the edge, right after the signature
check and before Bolt matches its listeners (``ApproveClicks.serve``). The decide script refuses a
replay, checks where the click comes from and the policy stored with the request, and records the
vote or decision (``bot.flow.decisions``). A 200 means it was recorded, or refused for a reason the
clicker is told (a refusal also writes its audit record and queues that answer: more round trips, on
a path that records nothing). A button of an older message (its value names no session) and a click
over Socket Mode go through Bolt's listener (``approving``): acked first, then served the same way.

An option's button of a question names its session too (``action_ids.choice_button_value``): a click on it answers
the question the same way, at the edge: one round trip before its answer too, the person told their answer was sent
once the click is answered (``bot.slack.edge.after_answer``); those the edge leaves to Bolt are
``bot.slack.listeners.choices``'s.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, cast

import redis

from bot.domain.status import Status
from bot.flow.decisions import DecisionService
from bot.flow.outcomes import Outcome, Replay
from bot.observe import metrics
from bot.observe.logs import log_context
from bot.render import action_ids as ids
from bot.slack.edge.after_answer import after_answer
from bot.slack.edge.guard import REPLAYED, Rejection, unrecorded
from bot.slack.edge.payloads import Action, BlockActions
from bot.slack.listeners.choices import answered_text, is_choice
from bot.slack.listeners.failures import tell_click_failed
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell_clicker
from bot.store.queues.outbox import Outbox

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ApproveClick:
    """An Approve click: the approval its button names, and its session when the button names one."""

    approval_id: str
    session_id: str | None
    body: BlockActions
    shown: str = ""
    """The digest of the input the button showed (``""``: a button that names none)."""
    trust: bool = False
    """"Approve and trust <tool> for this session": the approval also trusts the tool (``bot.domain.trusts``)."""
    choice: int | None = None
    """A question's option button: the option it picks (the click answers the question with it)."""


def approve_click(body: dict[str, Any]) -> ApproveClick | None:
    """The Approve click ``body`` is, or ``None`` for anything else (left to Bolt).

    ``body`` was checked by ``payload_shape`` already; it is an Approve click when its button names its session.
    """
    if body.get("type") != "block_actions":
        return None
    checked = cast(BlockActions, body)  # payload_problem has held it to that shape
    actions = checked["actions"]
    if len(actions) != 1:
        return None
    if is_choice(actions[0]["action_id"]):
        parsed = ids.parse_choice_button_value(str(actions[0].get("value", "")))
        if parsed is None:
            return None  # the listener tells the clicker
        index, approval_id, session_id = parsed
        return ApproveClick(approval_id, session_id, checked, choice=index) if session_id else None
    if actions[0]["action_id"] not in _APPROVING:
        return None
    click = _click(checked, actions[0])
    return click if click.session_id else None


_APPROVING: Final = frozenset({ids.APPROVE_ACTION, ids.TRUST_ACTION})
"""The buttons that approve: Approve, and "Approve and trust <tool> for this session"."""


def _click(body: BlockActions, action: Action) -> ApproveClick:
    approval_id, session_id, shown = ids.parse_button(action["value"])
    return ApproveClick(approval_id, session_id, body, shown, trust=action["action_id"] == ids.TRUST_ACTION)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApproveClicks:
    """Serves Approve clicks: at the edge before their answer (``serve``), or after Bolt's ack (``serve_acked``)."""

    decisions: DecisionService
    outbox: Outbox

    def serve(self, click: ApproveClick, *, replay: Replay) -> Rejection | None:
        """Decide the click and tell the clicker what needs telling; ``None`` (answer 200) or why it is refused."""
        with (
            log_context(session_id=click.session_id, approval_id=click.approval_id),
            metrics.CLICK_SECONDS.time(),
        ):
            try:
                outcome = self._decide(click, replay=replay)
            except (redis.ConnectionError, redis.TimeoutError) as error:
                return unrecorded(error)
            except Exception as error:  # boundary: the click must be answered and the clicker told, whatever failed
                self._failed(click, error)
                return None
            if outcome.status is Status.REPLAYED:
                return REPLAYED
            self._tell(click, outcome)
            return None

    def serve_acked(self, click: ApproveClick) -> None:
        """Decide a click Bolt has acked already (no replay check: Bolt's own) and tell the clicker, failures too."""
        with log_context(session_id=click.session_id, approval_id=click.approval_id):
            try:
                outcome = self._decide(click, replay=None)
            except Exception as error:  # boundary: the clicker is told, whatever failed
                self._failed(click, error)
                return
            self._tell(click, outcome)

    def _decide(self, click: ApproveClick, *, replay: Replay | None) -> Outcome:
        return self.decisions.decide(
            click.approval_id,
            session_id=click.session_id,
            user_id=clicker(click.body).user,
            kind="approve" if click.choice is None else "answer",
            reason=None,
            source="button",
            origin=click_origin(click.body),
            replay=replay,
            shown=click.shown,
            trust=click.trust,
            choices=None if click.choice is None else (click.choice,),
            with_request=click.choice is not None,  # the confirmation names the question
        )

    def _tell(self, click: ApproveClick, outcome: Outcome) -> None:
        answered = answered_text(outcome) if click.choice is not None else None
        if answered is not None:  # a confirmation, which waits for the click's answer (``after_answer``)
            after_answer(lambda: self._tell_text(click, answered))
            return
        self._tell_text(click, outcome_text(outcome))

    def _tell_text(self, click: ApproveClick, text: str | None) -> None:
        if not text:
            return
        try:
            tell_clicker(self.outbox, clicker(click.body), text)
        except redis.RedisError:
            # The click's outcome stands (recorded or refused); only the word to the clicker is lost.
            logger.exception("approval_id=<%s> | could not tell the clicker: %s", click.approval_id, text)

    def _failed(self, click: ApproveClick, error: Exception) -> None:
        """Nothing was recorded: say so through the click's response URL (the message stays clickable)."""
        logger.error("approval_id=<%s> | approve click failed", click.approval_id, exc_info=error)
        tell_click_failed(click.body, error, outbox=self.outbox)


def approving(*, decisions: DecisionService, outbox: Outbox) -> Callable[[BlockActions, Action], None]:
    """What serves an Approve click the edge left to Bolt (``bot.slack.listeners.actions`` acks it first)."""
    clicks = ApproveClicks(decisions=decisions, outbox=outbox)

    def approve(body: BlockActions, action: Action) -> None:
        clicks.serve_acked(_click(body, action))

    return approve
