"""The answer to a genuine Slack request that arrives while Redis is unreachable: nothing recorded, the person told.

Slack would show its generic error for a 500, and it retries no interaction. So:

- a click or a slash command: an empty 200 at once, and an ephemeral "not recorded, try again"
  through the request's ``response_url``, POSTed to Slack directly (the outbox lives in Redis)
  from a thread, so that the answer leaves within Slack's 3 s even after waiting for Redis;
- a modal submission: the modal stays open with that text under its input;
- an event: 503, so that Slack delivers it again later (Redis may be back by then).

Only requests whose signature was verified get here, so the ``response_url`` is Slack's.
"""

import json
import logging
import threading
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl

from slack_sdk.webhook import WebhookClient

from bot.domain.call_errors import SLACK_CALL_ERRORS
from bot.render import blocks
from bot.render.texts import answers

logger = logging.getLogger(__name__)

_RESPONSE_URL_TIMEOUT_S: Final = 10


@dataclass(frozen=True)
class OutageAnswer:
    """The HTTP answer: status and JSON body (``None``: empty)."""

    status: int
    body: dict[str, Any] | None


def answer(body: bytes, content_type: str) -> OutageAnswer:
    """Tell whoever sent ``body`` that nothing was recorded; return the HTTP answer to give Slack."""
    request = _parse(body, content_type)
    if request is None or request.get("type") == "event_callback":
        return OutageAnswer(503, {"error": answers.store_unreachable()})
    if request.get("type") == "view_submission":
        return OutageAnswer(200, _under_its_input(request, answers.store_unreachable()))
    response_url = request.get("response_url")
    if isinstance(response_url, str) and response_url:
        threading.Thread(target=_tell, args=(response_url,), name="tell-not-recorded", daemon=True).start()
    else:
        logger.warning("type=<%s> | Redis unreachable and no response_url: the person is not told", request.get("type"))
    return OutageAnswer(200, None)


def _under_its_input(submission: dict[str, Any], text: str) -> dict[str, Any]:
    """The modal's errors answer with ``text`` under the submitted view's first input (any form: deny, answer, edit).

    Slack shows a submission's errors only under input blocks of that view: keyed to another form's block, the person
    would read Slack's generic failure, not that nothing was recorded.
    """
    view: Any = submission.get("view")
    shown: Any = view.get("blocks") if isinstance(view, dict) else None
    state: Any = view.get("state") if isinstance(view, dict) else None
    filled: Any = state.get("values") if isinstance(state, dict) else None
    inputs = [each.get("block_id") for each in shown or () if isinstance(each, dict) and each.get("type") == "input"]
    named = [*inputs, *(filled if isinstance(filled, dict) else ())]  # its blocks in order, else its inputs' state
    first = next((each for each in named if isinstance(each, str) and each), None)
    if first is None:
        return blocks.modal_errors(text)
    return {"response_action": "errors", "errors": {first: blocks.modal_error_text(text)}}


def _tell(response_url: str) -> None:
    try:
        WebhookClient(response_url, timeout=_RESPONSE_URL_TIMEOUT_S).send(
            text=answers.store_unreachable(), response_type="ephemeral", replace_original=False
        )
    except SLACK_CALL_ERRORS:
        logger.exception("could not tell the person that their request was not recorded")


def _parse(body: bytes, content_type: str) -> dict[str, Any] | None:
    """The request's fields: an event's JSON, an interaction's payload, or a slash command's form."""
    text = body.decode("utf-8", errors="replace")
    try:
        if content_type.startswith("application/json"):
            value = json.loads(text)
        else:
            form = dict(parse_qsl(text, keep_blank_values=True))
            value = json.loads(form["payload"]) if "payload" in form else form
    except (json.JSONDecodeError, ValueError, RecursionError):  # RecursionError: nested too deeply to read
        return None
    return value if isinstance(value, dict) else None
