"""What a listener's failure looks like from Slack's side (Bolt answers 500 by default): the app's error handler.

- A click: the message stays clickable and the clicker is told, through the click's
  ``response_url``, that nothing was recorded (Slack does not retry interactivity); through the outbox, later,
  when Slack cannot take that answer now.
- A modal submission: the modal stays open with the error under the reason input.
- An event: 500, so that Slack redelivers it, and the delivery is forgotten so that the
  redelivery is processed rather than dropped as a duplicate.
"""

import json
import logging
from typing import Any, Final, cast

import redis
from slack_bolt import App, BoltResponse
from slack_sdk.webhook import WebhookClient

from bot.domain.call_errors import SLACK_CALL_ERRORS
from bot.render import blocks
from bot.render.texts import answers
from bot.slack.edge.payloads import BlockActions
from bot.slack.listeners.feedback import clicker, tell_clicker
from bot.store.event_deliveries import EventDeliveries
from bot.store.queues.outbox import Outbox

logger = logging.getLogger(__name__)

_RESPONSE_URL_TIMEOUT_S: Final = 3  # in the click's answer path: a Slack that hangs must not hold it


def tell_click_failed(body: BlockActions, error: Exception, *, outbox: Outbox) -> None:
    """Nothing was recorded: say so to the clicker only (the message stays).

    At once through the click's response URL; when Slack cannot take it (it is down: often why the click failed),
    queued in the outbox, so that the clicker is told once Slack is back rather than never.
    """
    text = answers.click_failed(type(error).__name__)
    response_url = body.get("response_url")
    if isinstance(response_url, str) and response_url:
        try:
            answer = WebhookClient(response_url, timeout=_RESPONSE_URL_TIMEOUT_S).send(
                text=text, response_type="ephemeral", replace_original=False
            )
        except SLACK_CALL_ERRORS as failure:
            logger.warning("could not tell the clicker at once that the click failed (%s): queued", failure)
        else:
            if 200 <= answer.status_code < 300:
                return
            logger.warning("could not tell the clicker at once that the click failed (%s): queued", answer.status_code)
    try:
        tell_clicker(outbox, clicker(body), text)
    except redis.RedisError:  # the answer is 200 either way: Slack shows nothing for it
        logger.exception("could not tell the clicker that the click failed")


def register(app: App, *, outbox: Outbox, event_deliveries: EventDeliveries) -> None:
    """Install the error handler on ``app``."""

    def on_error(error: Exception, body: dict[str, Any], response: BoltResponse) -> None:
        kind = body.get("type")
        logger.error("type=<%s> | listener failed: %s", kind, error, exc_info=error)
        summary = type(error).__name__
        if kind == "block_actions":
            response.status = 200
            response.body = ""
            tell_click_failed(cast(BlockActions, body), error, outbox=outbox)
        elif kind == "view_submission":
            response.status = 200
            response.body = json.dumps(blocks.modal_errors(answers.click_failed(summary)))
            response.headers["content-type"] = ["application/json;charset=utf-8"]
        elif kind == "event_callback" and body.get("event_id"):
            try:
                event_deliveries.forget(body["event_id"])
            except redis.RedisError:
                logger.exception("event_id=<%s> | could not forget the failed delivery", body["event_id"])

    app.error(on_error)
