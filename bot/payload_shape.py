"""The fields Bolt reads from a verified payload without checking them first.

Bolt 1.30 indexes ``view.type`` of every view submission, ``actions[0]`` of every block action and
``event.type`` of every event before any listener runs; a signed payload without them would be a
500. They are checked here so that such a request gets a 400 naming the field.
"""

from collections.abc import Mapping
from typing import Any


def payload_problem(body: Mapping[str, Any]) -> str | None:
    """What is missing from ``body`` (a parsed Slack request) for Bolt to read it, or ``None``."""
    kind = body.get("type")
    if kind is not None and not isinstance(kind, str):
        return "malformed payload: type must be a string"
    if kind == "event_callback":
        event = body.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return "malformed event_callback: event.type is missing"
    elif kind == "block_actions":
        actions = body.get("actions")
        if not isinstance(actions, list) or not actions or not all(isinstance(action, dict) for action in actions):
            return "malformed block_actions: actions must be a non-empty list of objects"
    elif kind in ("view_submission", "view_closed"):
        view = body.get("view")
        if not isinstance(view, dict) or not isinstance(view.get("type"), str):
            return f"malformed {kind}: view.type is missing"
    return None
