"""Approve clicks served at the edge: right after the signature check, before Bolt matches its listeners.

An Approve button carries its approval's session (``bot.render.action_ids.button_value``), so a
click is one Redis round trip before its answer: the decide script refuses a replay, checks where
the click comes from and the policy stored with the request, and records the vote or decision
(``bot.flow.decisions``). A 200 means it was recorded, or refused for a reason the clicker is
told (a refusal also writes its audit record and queues that answer: more round trips, on a path
that records nothing). A button of an older message (its value names no session) goes through
Bolt's listener (``bot.slack.listeners.approvals``).
"""

import logging
from dataclasses import dataclass
from typing import Any

import redis
from slack_sdk.webhook import WebhookClient

from bot.domain.status import Status
from bot.flow.decisions import DecisionService
from bot.flow.outcomes import Replay
from bot.observe import metrics
from bot.observe.logs import log_context
from bot.render import action_ids as ids
from bot.render.texts import answers
from bot.slack.guard import REPLAYED, Rejection, unrecorded
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell
from bot.store.outbox import Outbox

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ApproveClick:
    """An Approve click whose button names its approval and session."""

    approval_id: str
    session_id: str
    body: dict[str, Any]
    shown: str = ""
    """The digest of the input the button showed (``""``: a button that names none)."""


def approve_click(body: dict[str, Any]) -> ApproveClick | None:
    """The Approve click ``body`` is (checked by ``payload_shape`` already), or ``None`` for anything else."""
    if body.get("type") != "block_actions":
        return None
    actions = body["actions"]
    if len(actions) != 1 or actions[0]["action_id"] != ids.APPROVE_ACTION:
        return None
    approval_id, session_id, shown = ids.parse_button(actions[0]["value"])
    return ApproveClick(approval_id, session_id, body, shown) if session_id else None


class ApproveClicks:
    """Serves Approve clicks at the edge."""

    def __init__(self, *, decisions: DecisionService, outbox: Outbox) -> None:
        """Keep the collaborators."""
        self._decisions = decisions
        self._outbox = outbox

    def serve(self, click: ApproveClick, *, replay: Replay) -> Rejection | None:
        """Decide the click and tell the clicker what needs telling; ``None`` (answer 200) or why it is refused."""
        with (
            log_context(session_id=click.session_id, approval_id=click.approval_id),
            metrics.CLICK_SECONDS.time(),
        ):
            return self._serve(click, replay=replay)

    def _serve(self, click: ApproveClick, *, replay: Replay) -> Rejection | None:
        who = clicker(click.body)
        try:
            outcome = self._decisions.decide(
                click.approval_id,
                session_id=click.session_id,
                user_id=who.user,
                kind="approve",
                reason=None,
                source="button",
                origin=click_origin(click.body),
                replay=replay,
                shown=click.shown,
            )
        except (redis.ConnectionError, redis.TimeoutError) as error:
            return unrecorded(error)
        except Exception as error:
            logger.exception("approval_id=<%s> | approve click failed", click.approval_id)
            _tell_failed(click.body, type(error).__name__)
            return None
        if outcome.status is Status.REPLAYED:
            return REPLAYED
        text = outcome_text(outcome)
        if text:
            try:
                tell(
                    self._outbox,
                    team_id=who.team,
                    channel=who.channel,
                    user=who.user,
                    text=text,
                    thread_ts=who.thread_ts,
                )
            except redis.RedisError:
                # The click's outcome stands (recorded or refused); only the word to the clicker is lost.
                logger.exception("approval_id=<%s> | could not tell the clicker: %s", click.approval_id, text)
        return None


def _tell_failed(body: dict[str, Any], summary: str) -> None:
    """Nothing was recorded: say so through the click's response URL (the message stays clickable)."""
    response_url = body.get("response_url")
    if isinstance(response_url, str) and response_url:
        try:
            WebhookClient(response_url).send(
                text=answers.click_failed(summary), response_type="ephemeral", replace_original=False
            )
        except Exception:  # the answer is 200 either way: Slack shows nothing for it
            logger.exception("could not tell the clicker that the click failed")
