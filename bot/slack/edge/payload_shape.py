"""The fields Bolt and the listeners read from a verified payload, checked once before either does.

Bolt 1.30 indexes ``view.type`` of every view submission, ``actions[0]`` of every block action and
``event.type`` of every event, and reads ``user``, ``channel``, ``team`` and ``enterprise`` (each a
string or an object with an ``id``) while it builds its context, before any listener runs. The
listeners then read the event's user, channel, ts and text, and a ``team_access_revoked``'s
``team_ids``. A signed payload with another shape would fail the same way on every delivery: it is
refused here with the field named (a 400 over HTTP; over Socket Mode, acked and dropped so that
Slack does not redeliver it). What passes is typed for the listeners in ``bot.slack.edge.payloads``.
"""

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from bot.render import controls

# A Slack message timestamp: Unix seconds (a date datetime can hold) and up to six decimals.
_SLACK_TS: Final = re.compile(r"[0-9]{1,10}(?:\.[0-9]{1,6})?")
# Where Bolt finds the ids of its context (in the body, the event and the first authorization).
_ID_OBJECTS: Final = ("enterprise", "team", "user", "channel")
_FLAT_IDS: Final = ("enterprise_id", "team_id", "user_id", "channel_id", "event_id")
_NESTED_IN_EVENTS: Final = ("message", "previous_message", "item", "assistant_thread")
_MAX_SHOWN_KEY: Final = 64
_INTERACTIONS: Final = ("block_actions", "view_submission", "view_closed", "shortcut", "message_action")


def payload_problem(body: Any) -> str | None:
    """What of ``body`` (a parsed Slack request) Bolt or a listener cannot read, or ``None``."""
    if not isinstance(body, dict):
        return "malformed payload: expected a JSON object"
    kind = body.get("type")
    if kind is not None and not isinstance(kind, str):
        return "malformed payload: type must be a string"
    problem = _ids_problem(body, "") or _authorizations_problem(body)
    if problem is not None:
        return problem
    if kind == "event_callback":
        return _event_callback_problem(body.get("event"))
    if kind in _INTERACTIONS and not _is_text(_id_of(body.get("user"))):
        return f"malformed {kind}: user.id is missing"
    if kind == "block_actions":
        return _actions_problem(body.get("actions")) or _click_place_problem(body)
    if kind in ("view_submission", "view_closed"):
        return _view_problem(body.get("view"), kind)
    if kind is None and "command" in body:
        return _command_problem(body)
    return None


def _event_callback_problem(event: Any) -> str | None:
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return "malformed event_callback: event.type is missing"
    problem = _ids_problem(event, "event.")
    for name in _NESTED_IN_EVENTS:
        if problem is None and isinstance(event.get(name), dict):
            problem = _ids_problem(event[name], f"event.{name}.")
    if problem is not None:
        return problem
    kind = event["type"]
    if kind in ("message", "app_mention"):
        required = ("channel", "ts", "user") if kind == "app_mention" else ("channel", "ts")
        return _fields_problem(event, kind, required=required)
    if kind == "app_home_opened":
        return _fields_problem(event, kind, required=("user",))
    if kind == "team_access_revoked":
        team_ids = event.get("team_ids")
        if not isinstance(team_ids, list) or not all(_is_text(team) for team in team_ids):
            return f"malformed {kind} event: event.team_ids must be a list of strings"
    return None


def _fields_problem(event: Mapping[str, Any], kind: str, *, required: tuple[str, ...]) -> str | None:
    """The event fields the listeners read: strings (Slack timestamps for ``ts``), present where required."""
    for name in ("user", "channel", "team", "text", "tab", "ts", "thread_ts"):
        if name not in event:
            if name in required:
                return f"malformed {kind} event: event.{name} is missing"
            continue
        value = event[name]
        if not _is_text(value):
            return f"malformed {kind} event: event.{name} must be a string of valid Unicode"
        if name in ("ts", "thread_ts") and not _SLACK_TS.fullmatch(value):
            return f"malformed {kind} event: event.{name} must be a Slack timestamp (seconds.micros)"
    return None


def _ids_problem(node: Mapping[str, Any], prefix: str) -> str | None:
    for name in _ID_OBJECTS:
        value = node.get(name)
        if value is None or isinstance(value, str):
            continue
        if not isinstance(value, dict) or not isinstance(value.get("id"), str | None):
            return f"malformed payload: {prefix}{name} must be a string or an object with a string id"
    for name in _FLAT_IDS:
        if not isinstance(node.get(name), str | None):
            return f"malformed payload: {prefix}{name} must be a string"
    return None


def _authorizations_problem(body: Mapping[str, Any]) -> str | None:
    authorizations = body.get("authorizations")
    if authorizations is None:
        return None
    if not isinstance(authorizations, list) or not all(isinstance(each, dict) for each in authorizations):
        return "malformed payload: authorizations must be a list of objects"
    return _ids_problem(authorizations[0], "authorizations[0].") if authorizations else None


def _actions_problem(actions: Any) -> str | None:
    if not isinstance(actions, list) or not actions or not all(isinstance(action, dict) for action in actions):
        return "malformed block_actions: actions must be a non-empty list of objects"
    for index, action in enumerate(actions):
        if not isinstance(action.get("action_id"), str):
            return f"malformed block_actions: actions[{index}].action_id must be a string"
        if action["action_id"] in controls.BUTTONS and "value" not in action:  # each carries what it acts on
            return f"malformed block_actions: actions[{index}].value is missing"
        if "value" in action and not _is_text(action["value"]):
            return f"malformed block_actions: actions[{index}].value must be a string of valid Unicode"
    return None


def _click_place_problem(body: Mapping[str, Any]) -> str | None:
    """Where a click came from: ``channel``, ``container``, ``message`` objects; what places it, strings.

    A thread (``container.thread_ts``, else ``message.thread_ts``) is a Slack timestamp.
    """
    for name in ("channel", "container", "message"):
        if name in body and not isinstance(body[name], dict):
            return f"malformed block_actions: {name} must be an object"
    for name in ("container.channel_id", "container.message_ts", "container.thread_ts", "message.thread_ts"):
        parent, _, field = name.partition(".")
        value = body.get(parent, {}).get(field)
        if value is None:
            continue
        if not _is_text(value):
            return f"malformed block_actions: {name} must be a string"
        if field == "thread_ts" and not _SLACK_TS.fullmatch(value):
            return f"malformed block_actions: {name} must be a Slack timestamp (seconds.micros)"
    return None


def _view_problem(view: Any, kind: str) -> str | None:
    """A submitted view: its type, callback id and metadata are strings, its inputs' values strings or null."""
    if not isinstance(view, dict) or not isinstance(view.get("type"), str):
        return f"malformed {kind}: view.type is missing"
    for name in ("callback_id", "private_metadata"):
        if not _is_text(view.get(name)):
            return f"malformed {kind}: view.{name} must be a string"
    state = view.get("state", {})
    blocks = state.get("values", {}) if isinstance(state, dict) else None
    if not isinstance(blocks, dict):
        return f"malformed {kind}: view.state.values must be an object"
    for block_id, inputs in blocks.items():
        if not isinstance(inputs, dict) or not all(isinstance(each, dict) for each in inputs.values()):
            return f"malformed {kind}: view.state.values.{_shown(block_id)} must map action ids to objects"
        for action_id, each in inputs.items():
            if each.get("value") is not None and not _is_text(each["value"]):
                return (
                    f"malformed {kind}: view.state.values.{_shown(block_id)}.{_shown(action_id)}.value must be a string"
                )
    return None


def _command_problem(body: Mapping[str, Any]) -> str | None:
    for name in ("command", "user_id", "channel_id"):
        if not _is_text(body.get(name)):
            return f"malformed slash command: {name} is missing"
    if "text" in body and not _is_text(body["text"]):
        return "malformed slash command: text must be a string of valid Unicode"
    return None


def _shown(key: str) -> str:
    """A key of the payload as an error names it: short, and spelled as JSON would (no raw control characters)."""
    return json.dumps(key[:_MAX_SHOWN_KEY])


def _id_of(value: Any) -> Any:
    return value.get("id") if isinstance(value, dict) else None


def _is_text(value: Any) -> bool:
    """A string Redis and Slack can carry: no lone surrogate (JSON can spell one, UTF-8 cannot)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
