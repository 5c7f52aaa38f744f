"""What a listener's failure looks like from Slack's side (Bolt answers 500 by default): the app's error handler.

- A click: the message stays clickable and the clicker is told, through the click's
  ``response_url``, that nothing was recorded (Slack does not retry interactivity).
- A modal submission: the modal stays open with the error under the reason input.
- An event: 500, so that Slack redelivers it, and the delivery is forgotten so that the
  redelivery is processed rather than dropped as a duplicate.
"""

import json
import logging
from collections.abc import Mapping
from typing import Any

import redis
from slack_bolt import App, BoltResponse
from slack_sdk.webhook import WebhookClient

from bot.render import blocks
from bot.render.texts import answers
from bot.services import Services
from bot.slack.call_errors import SLACK_CALL_ERRORS

logger = logging.getLogger(__name__)


def tell_click_failed(body: Mapping[str, Any], error: Exception) -> None:
    """Nothing was recorded: say so through the click's response URL, to the clicker only (the message stays)."""
    response_url = body.get("response_url")
    if not isinstance(response_url, str) or not response_url:
        return
    try:
        WebhookClient(response_url).send(
            text=answers.click_failed(type(error).__name__), response_type="ephemeral", replace_original=False
        )
    except SLACK_CALL_ERRORS:  # the answer is 200 either way: Slack shows nothing for it
        logger.exception("could not tell the clicker that the click failed")


def register(app: App, services: Services) -> None:
    """Install the error handler on ``app``."""

    def on_error(error: Exception, body: dict[str, Any], response: BoltResponse) -> None:
        kind = body.get("type")
        logger.error("type=<%s> | listener failed: %s", kind, error, exc_info=error)
        summary = type(error).__name__
        if kind == "block_actions":
            response.status = 200
            response.body = ""
            tell_click_failed(body, error)
        elif kind == "view_submission":
            response.status = 200
            response.body = json.dumps(blocks.modal_errors(answers.click_failed(summary)))
            response.headers["content-type"] = ["application/json;charset=utf-8"]
        elif kind == "event_callback" and body.get("event_id"):
            try:
                services.stores.event_deliveries.forget(body["event_id"])
            except redis.RedisError:
                logger.exception("event_id=<%s> | could not forget the failed delivery", body["event_id"])

    app.error(on_error)
