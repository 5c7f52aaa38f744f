"""The interaction payloads Slack sends an app.

``block_actions`` (a click on a message or on the App Home) and ``view_submission``.
"""

import time
from collections.abc import Mapping, Sequence
from typing import Any

from loopback_slack.slack_requests.team import (
    BOT_ID,
    BOT_USER_ID,
    DEFAULT_TEAM,
    VERIFICATION_TOKEN,
    JsonDict,
    Team,
    new_response_url,
    new_trigger_id,
    new_ts,
    next_id,
)


def _user(user_id: str, username: str | None, team_id: str) -> JsonDict:
    name = username or user_id.lower()
    return {"id": user_id, "username": name, "name": name, "team_id": team_id}


def _enterprise(team: Team) -> JsonDict | None:
    """The ``enterprise`` of a payload from ``team``: its Enterprise Grid org, if any."""
    return None if team.enterprise_id is None else {"id": team.enterprise_id, "name": team.enterprise_id}


def _clicked(action_id: str, block_id: str, value: str | None, button_text: str | None, style: str | None) -> JsonDict:
    """The ``actions[0]`` entry Slack sends for a click on a button."""
    action: JsonDict = {
        "action_id": action_id,
        "block_id": block_id,
        "text": {"type": "plain_text", "text": button_text or action_id.replace("_", " ").title(), "emoji": True},
        "type": "button",
        "action_ts": new_ts(),
    }
    if value is not None:
        action["value"] = value
    if style is not None:
        action["style"] = style
    return action


def block_actions(
    *,
    action_id: str,
    user_id: str,
    channel_id: str,
    message_ts: str,
    value: str | None = None,
    block_id: str | None = None,
    thread_ts: str | None = None,
    blocks: Sequence[Mapping[str, Any]] | None = None,
    message_text: str = "",
    username: str | None = None,
    team: Team = DEFAULT_TEAM,
    trigger_id: str | None = None,
    response_url: str | None = None,
    button_text: str | None = None,
    style: str | None = None,
    is_ephemeral: bool = False,
    channel_name: str = "general",
    message: Mapping[str, Any] | None = None,
) -> JsonDict:
    """A ``block_actions`` payload for a click on the bot's message ``message_ts`` in ``channel_id`` (in ``team``).

    ``response_url`` defaults to a hooks.slack.com URL; pass ``LoopbackSlack.response_url(...)`` if the app uses it.
    ``message`` is the message as Slack shows it (default: the bot's, with ``blocks`` and ``message_text``).
    """
    action = _clicked(action_id, block_id or f"b{next_id():05d}", value, button_text, style)
    container: JsonDict = {
        "type": "message",
        "message_ts": message_ts,
        "channel_id": channel_id,
        "is_ephemeral": is_ephemeral,
    }
    shown: JsonDict = {
        "user": BOT_USER_ID,
        "type": "message",
        "ts": message_ts,
        "bot_id": BOT_ID,
        "app_id": team.app_id,
        "text": message_text,
        "team": team.team_id,
        "blocks": [dict(b) for b in blocks] if blocks is not None else [],
    }
    if thread_ts is not None:
        container["thread_ts"] = thread_ts
        shown["thread_ts"] = thread_ts
    if message is not None:
        shown = {k: v for k, v in message.items() if not k.startswith("_")}
    payload: JsonDict = {
        "type": "block_actions",
        "user": _user(user_id, username, team.team_id),
        "api_app_id": team.app_id,
        "token": VERIFICATION_TOKEN,
        "container": container,
        "trigger_id": trigger_id or new_trigger_id(),
        "team": {"id": team.team_id, "domain": team.team_domain},
        "enterprise": _enterprise(team),
        "is_enterprise_install": team.is_enterprise_install,
        "channel": {"id": channel_id, "name": channel_name},
        "state": {"values": {}},
        "response_url": response_url or new_response_url(team.team_id),
        "actions": [action],
    }
    if not is_ephemeral:
        payload["message"] = shown
    return payload


def home_block_actions(
    team: Team, *, user: str, view: Mapping[str, Any], action: Mapping[str, Any], block_id: str, trigger_id: str
) -> JsonDict:
    """A click on the button ``action`` (as the view shows it) of the App Home tab ``view``.

    Its container is the view: it names no channel or message.
    """
    text = action.get("text")
    return {
        "type": "block_actions",
        "user": _user(user, None, team.team_id),
        "api_app_id": team.app_id,
        "token": VERIFICATION_TOKEN,
        "container": {"type": "view", "view_id": view.get("id", "")},
        "trigger_id": trigger_id,
        "team": {"id": team.team_id, "domain": team.team_domain},
        "enterprise": _enterprise(team),
        "is_enterprise_install": team.is_enterprise_install,
        "view": dict(view),
        "actions": [
            _clicked(
                str(action.get("action_id", "")),
                block_id,
                action.get("value"),
                str(text.get("text", "")) if isinstance(text, Mapping) else None,
                action.get("style"),
            )
        ],
    }


def _state_values(values: Mapping[str, Mapping[str, Any]]) -> JsonDict:
    state: JsonDict = {}
    for block_id, actions in values.items():
        state[block_id] = {
            action_id: dict(element) if isinstance(element, Mapping) else {"type": "plain_text_input", "value": element}
            for action_id, element in actions.items()
        }
    return state


def view_submission(
    *,
    callback_id: str,
    user_id: str,
    values: Mapping[str, Mapping[str, Any]] | None = None,
    private_metadata: str = "",
    external_id: str = "",
    view_id: str | None = None,
    blocks: Sequence[Mapping[str, Any]] | None = None,
    username: str | None = None,
    team: Team = DEFAULT_TEAM,
    trigger_id: str | None = None,
    title: str = "Signoff",
    view: Mapping[str, Any] | None = None,
) -> JsonDict:
    """A ``view_submission`` payload for the modal ``callback_id``, in ``team``.

    ``values`` maps block_id -> action_id -> a string (a ``plain_text_input`` value; ``None`` for an empty input) or a
    full state element dict (e.g. ``{"type": "static_select", "selected_option": {...}}``). ``view`` is the modal as
    Slack keeps it (default: one built from ``callback_id``, ``private_metadata``, ``blocks``...); its state becomes
    ``values``.
    """
    view_id = view_id or f"V{next_id():08d}"
    state = {"values": _state_values(values or {})}
    submitted: JsonDict = {
        "id": view_id,
        "team_id": team.team_id,
        "type": "modal",
        "blocks": [dict(b) for b in blocks] if blocks is not None else [],
        "private_metadata": private_metadata,
        "callback_id": callback_id,
        "state": state,
        "hash": f"{int(time.time())}.{next_id():08d}",
        "title": {"type": "plain_text", "text": title, "emoji": True},
        "clear_on_close": False,
        "notify_on_close": False,
        "close": {"type": "plain_text", "text": "Cancel", "emoji": True},
        "submit": {"type": "plain_text", "text": "Submit", "emoji": True},
        "previous_view_id": None,
        "root_view_id": view_id,
        "app_id": team.app_id,
        "external_id": external_id,
        "app_installed_team_id": team.team_id,
        "bot_id": BOT_ID,
    }
    return {
        "type": "view_submission",
        "team": {"id": team.team_id, "domain": team.team_domain},
        "user": _user(user_id, username, team.team_id),
        "api_app_id": team.app_id,
        "token": VERIFICATION_TOKEN,
        "trigger_id": trigger_id or new_trigger_id(),
        "view": submitted if view is None else {**view, "state": state},
        "response_urls": [],
        "is_enterprise_install": team.is_enterprise_install,
        "enterprise": _enterprise(team),
    }
