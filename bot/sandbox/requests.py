"""Requests as Slack sends them to the bot's Request URL: shaped, encoded and signed like Slack's.

The stand-in builds ``event_callback`` envelopes (``message``, ``app_mention``), ``block_actions`` and
``view_submission`` payloads and slash-command fields, and POSTs them to the bot signed with the sandbox's signing
secret (``X-Slack-Signature: v0=HMAC-SHA256(secret, "v0:{timestamp}:{body}")``), exactly as Slack does.
"""

import hashlib
import hmac
import itertools
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlencode

JsonDict = dict[str, Any]

_MENTION: Final = re.compile(r"<@([UW][A-Z0-9]+)>")
_counter = itertools.count(1)


@dataclass(frozen=True)
class Workspace:
    """The ids Slack puts in every request."""

    team_id: str
    team_domain: str
    app_id: str
    bot_user_id: str
    bot_id: str


def new_id(prefix: str = "") -> str:
    """A fresh opaque id (event ids, trigger ids)."""
    n = next(_counter)
    return f"{prefix}{int(time.time())}{n:05d}{hashlib.sha256(f'{prefix}{n}{time.time()}'.encode()).hexdigest()[:8]}"


def rich_text(text: str) -> list[JsonDict]:
    """The ``rich_text`` block Slack attaches to a person's message (``<@U…>`` mentions as user elements)."""
    elements: list[JsonDict] = []
    position = 0
    for match in _MENTION.finditer(text):
        if match.start() > position:
            elements.append({"type": "text", "text": text[position : match.start()]})
        elements.append({"type": "user", "user_id": match.group(1)})
        position = match.end()
    if position < len(text):
        elements.append({"type": "text", "text": text[position:]})
    section = {"type": "rich_text_section", "elements": elements}
    return [{"type": "rich_text", "block_id": new_id("rt")[:8], "elements": [section]}]


def message_events(
    space: Workspace, *, user: str, channel: str, text: str, ts: str, thread_ts: str | None
) -> list[JsonDict]:
    """What Slack sends for a person's message: a ``message`` event, plus an ``app_mention`` if it mentions the bot."""
    event: JsonDict = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "team": space.team_id,
        "blocks": rich_text(text),
        "channel_type": "im" if channel.startswith("D") else "channel",
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
        event["parent_user_id"] = space.bot_user_id
    events = [event]
    if f"<@{space.bot_user_id}>" in text and not channel.startswith("D"):
        mention = {k: v for k, v in event.items() if k not in {"channel_type", "parent_user_id"}}
        events.append({**mention, "type": "app_mention"})
    return [_envelope(space, e) for e in events]


def app_home_opened(space: Workspace, *, user: str, channel: str, view: JsonDict | None) -> JsonDict:
    """What Slack sends when ``user`` opens the app's Home tab."""
    event: JsonDict = {"type": "app_home_opened", "user": user, "channel": channel, "tab": "home"}
    event["event_ts"] = f"{time.time():.6f}"
    if view is not None:
        event["view"] = view
    return _envelope(space, event)


def _envelope(space: Workspace, event: JsonDict) -> JsonDict:
    return {
        "token": "sandbox-verification-token",
        "team_id": space.team_id,
        "context_team_id": space.team_id,
        "api_app_id": space.app_id,
        "event": event,
        "type": "event_callback",
        "event_id": new_id("Ev"),
        "event_time": int(time.time()),
        "authorizations": [
            {"team_id": space.team_id, "user_id": space.bot_user_id, "is_bot": True, "is_enterprise_install": False}
        ],
        "is_ext_shared_channel": False,
    }


def _user(space: Workspace, user: str) -> JsonDict:
    return {"id": user, "username": user.lower(), "name": user.lower(), "team_id": space.team_id}


def _clicked(action: JsonDict, block_id: str) -> JsonDict:
    """The ``actions[0]`` entry Slack sends for a click on ``action``."""
    clicked: JsonDict = {
        "action_id": action.get("action_id", ""),
        "block_id": block_id,
        "text": action.get("text") or {"type": "plain_text", "text": ""},
        "type": action.get("type", "button"),
        "action_ts": f"{time.time():.6f}",
    }
    for name in ("value", "style"):
        if name in action:
            clicked[name] = action[name]
    return clicked


def block_actions(
    space: Workspace,
    *,
    user: str,
    channel: str,
    message: JsonDict,
    action: JsonDict,
    block_id: str,
    trigger_id: str,
    response_url: str,
    is_ephemeral: bool = False,
) -> JsonDict:
    """A button click on ``message``: the ``block_actions`` payload."""
    clicked = _clicked(action, block_id)
    container: JsonDict = {
        "type": "message",
        "message_ts": message["ts"],
        "channel_id": channel,
        "is_ephemeral": is_ephemeral,
    }
    if message.get("thread_ts"):
        container["thread_ts"] = message["thread_ts"]
    payload: JsonDict = {
        "type": "block_actions",
        "user": _user(space, user),
        "api_app_id": space.app_id,
        "token": "sandbox-verification-token",
        "container": container,
        "trigger_id": trigger_id,
        "team": {"id": space.team_id, "domain": space.team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": channel.lower()},
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [clicked],
    }
    if not is_ephemeral:
        payload["message"] = {k: v for k, v in message.items() if not k.startswith("_")}
    return payload


def home_block_actions(
    space: Workspace, *, user: str, view: JsonDict, action: JsonDict, block_id: str, trigger_id: str
) -> JsonDict:
    """A button click on the App Home tab: a view container, and no channel or message."""
    clicked = _clicked(action, block_id)
    return {
        "type": "block_actions",
        "user": _user(space, user),
        "api_app_id": space.app_id,
        "token": "sandbox-verification-token",
        "container": {"type": "view", "view_id": view.get("id", "")},
        "trigger_id": trigger_id,
        "team": {"id": space.team_id, "domain": space.team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "view": view,
        "actions": [clicked],
    }


def view_submission(space: Workspace, *, user: str, view: JsonDict, values: JsonDict, trigger_id: str) -> JsonDict:
    """A modal submitted with ``values`` (block_id -> action_id -> state element)."""
    return {
        "type": "view_submission",
        "team": {"id": space.team_id, "domain": space.team_domain},
        "user": _user(space, user),
        "api_app_id": space.app_id,
        "token": "sandbox-verification-token",
        "trigger_id": trigger_id,
        "view": {**view, "state": {"values": values}},
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }


def slash_command(
    space: Workspace, *, user: str, channel: str, command: str, text: str, trigger_id: str, response_url: str
) -> dict[str, str]:
    """A slash command's form fields."""
    return {
        "token": "sandbox-verification-token",
        "team_id": space.team_id,
        "team_domain": space.team_domain,
        "channel_id": channel,
        "channel_name": channel.lower(),
        "user_id": user,
        "user_name": user.lower(),
        "command": command,
        "text": text,
        "api_app_id": space.app_id,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id,
    }


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """Slack's request signature."""
    digest = hmac.new(secret.encode(), b"v0:" + str(timestamp).encode() + b":" + body, hashlib.sha256).hexdigest()
    return f"v0={digest}"


@dataclass(frozen=True)
class Answer:
    """The bot's HTTP answer."""

    status: int
    body: str

    def json(self) -> JsonDict | None:
        """The body as a JSON object, if it is one."""
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class BotEndpoint:
    """The bot's Request URL and the secret to sign with."""

    url: str
    signing_secret: str
    timeout: float = 10.0

    def event(self, body: Mapping[str, Any]) -> Answer:
        return self._post(json.dumps(body, separators=(",", ":")).encode(), "application/json")

    def interaction(self, payload: Mapping[str, Any]) -> Answer:
        body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode()
        return self._post(body, "application/x-www-form-urlencoded")

    def command(self, fields: Mapping[str, str]) -> Answer:
        return self._post(urlencode(dict(fields)).encode(), "application/x-www-form-urlencoded")

    def _post(self, body: bytes, content_type: str) -> Answer:
        timestamp = int(time.time())
        headers = {
            "Content-Type": content_type,
            "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
            "X-Slack-Request-Timestamp": str(timestamp),
            "X-Slack-Signature": sign(self.signing_secret, timestamp, body),
        }
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return Answer(response.status, response.read().decode("utf-8", errors="replace"))
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.read().decode("utf-8", errors="replace"))
