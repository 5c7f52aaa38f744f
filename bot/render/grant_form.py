"""The "Approve + allow similar" modal: the person ticks the fields a standing approval pins (pure functions).

Each ticked field must have the value it has now; the others may be anything. The modal says so, and says whose
calls it covers, before anything is granted; the durations are the rule's own.
"""

import json
from typing import Any, Final

from bot.domain.records import ApprovalRequest
from bot.render import blocks, safe_text
from bot.render.action_ids import GRANT_DURATION_BLOCK, GRANT_FIELDS_BLOCK, GRANT_INPUT, GRANT_MODAL_CALLBACK
from bot.render.texts import approval_request, standing_approvals

_OPTION_MAX: Final = 75  # an option's text


def grant_modal(request: ApprovalRequest, *, private_metadata: str, external_id: str) -> dict[str, Any]:
    """The modal (views.open) for ``request``, whose input is an object (``bot.domain.grants.offers_similar``)."""
    options = [
        {"text": blocks.plain_text(_field_text(name, value)), "value": name}
        for name, value in dict(request.tool_input).items()
    ]
    durations = [
        {"text": blocks.plain_text(standing_approvals.similar_duration(seconds)), "value": str(seconds)}
        for seconds in request.policy.grant_durations
    ]
    return {
        "type": "modal",
        "callback_id": GRANT_MODAL_CALLBACK,
        "private_metadata": private_metadata,
        "external_id": external_id,
        "title": blocks.plain_text(standing_approvals.SIMILAR_TITLE),
        "submit": blocks.plain_text(standing_approvals.SIMILAR_SUBMIT),
        "close": blocks.plain_text(approval_request.CANCEL_LABEL),
        "blocks": [
            blocks.section(standing_approvals.similar_intro(request)),
            blocks.context(standing_approvals.similar_whose(request)),
            {
                "type": "input",
                "block_id": GRANT_FIELDS_BLOCK,
                "label": blocks.plain_text(standing_approvals.SIMILAR_FIELDS_LABEL),
                "element": {
                    "type": "checkboxes",
                    "action_id": GRANT_INPUT,
                    "options": options,
                    "initial_options": options,
                },
            },
            {
                "type": "input",
                "block_id": GRANT_DURATION_BLOCK,
                "label": blocks.plain_text(standing_approvals.SIMILAR_DURATION_LABEL),
                "element": {
                    "type": "static_select",
                    "action_id": GRANT_INPUT,
                    "options": durations,
                    "initial_option": durations[0],
                },
            },
        ],
    }


def _field_text(name: str, value: Any) -> str:
    try:
        shown = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (RecursionError, ValueError, TypeError):
        shown = approval_request.UNDISPLAYABLE
    return safe_text.clip_plain(f"{name} = {shown}", _OPTION_MAX)


def grant_errors(problems: dict[str, str]) -> dict[str, Any]:
    """A view-submission answer showing each problem under its block: ``ack(**grant_errors(...))``."""
    return {
        "response_action": "errors",
        "errors": {block: safe_text.clip_plain(text, blocks.MODAL_ERROR_MAX) for block, text in problems.items()},
    }
