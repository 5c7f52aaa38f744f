"""Requests as Slack sends them to an app's Request URL, signed, and a poster that sends them over real HTTP.

The one builder of Slack's requests: the sandbox's stand-in sends what its people do through it, and the tests drive
the bot with it. The builders return plain dicts shaped like Slack's: ``event_callback`` envelopes (``app_mention``,
``message``, ``app_home_opened``), ``block_actions`` and ``view_submission`` interaction payloads, slash-command form
fields and ``url_verification``. ``SignedPoster`` encodes them the way Slack does (events as JSON, interactions as
``payload=<json>`` form fields, commands as form fields), signs them (``X-Slack-Signature:
v0=HMAC-SHA256(secret, "v0:{ts}:{body}")``) and POSTs them; it can also forge, age, replay and mangle requests.

Longer than most modules: each builder is one of Slack's request shapes, spelled out field by field.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import itertools
import json
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NamedTuple, Self, TypedDict, Unpack
from urllib.parse import urlencode, urlsplit

__all__ = [
    "APP_ID",
    "BOT_ID",
    "BOT_USER_ID",
    "STALE_SECONDS",
    "TEAM_ID",
    "TEST_TEAM",
    "VERIFICATION_TOKEN",
    "PostOptions",
    "PostResult",
    "SentRequest",
    "SignedPoster",
    "Team",
    "app_home_opened",
    "app_mention",
    "block_actions",
    "encode_command",
    "encode_event",
    "encode_payload",
    "event_callback",
    "home_block_actions",
    "message_event",
    "message_events",
    "new_trigger_id",
    "rich_text",
    "sign",
    "slash_command",
    "url_verification",
    "view_submission",
]

JsonDict = dict[str, Any]

# The defaults match FakeSlack's, so a Bolt app authorised against the fake sees a consistent workspace.
TEAM_ID = "T0TEST"
TEAM_DOMAIN = "test"
APP_ID = "A0APP"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
VERIFICATION_TOKEN = "legacy-verification-token"  # the deprecated `token` field Slack still sends
STALE_SECONDS = 10 * 60  # older than the 5 minutes slack_sdk's SignatureVerifier accepts

_counter = itertools.count(1)
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)>")


@dataclass(frozen=True)
class Team:
    """The ids Slack puts in every request: the team, and the app and its bot user."""

    team_id: str = TEAM_ID
    team_domain: str = TEAM_DOMAIN
    app_id: str = APP_ID
    bot_user_id: str = BOT_USER_ID
    bot_id: str = BOT_ID


TEST_TEAM = Team()  # FakeSlack's defaults


def _next_id() -> int:
    return next(_counter)


def _new_ts() -> str:
    return f"{time.time():.6f}"


def new_trigger_id() -> str:
    """A fresh ``trigger_id``, shaped like Slack's."""
    n = _next_id()
    return f"{1_000_000_000 + n}.{n:04d}.{hashlib.sha256(str(n).encode()).hexdigest()[:32]}"


def _response_url(team_id: str) -> str:
    n = _next_id()
    return (
        f"https://hooks.slack.com/actions/{team_id}/{1_000_000 + n}/{hashlib.sha256(str(n).encode()).hexdigest()[:24]}"
    )


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
    return [{"type": "rich_text", "block_id": f"rt{_next_id():05d}", "elements": [section]}]


# ---------------------------------------------------------------------------------------------------- Events API


def event_callback(
    event: Mapping[str, Any],
    *,
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    bot_user_id: str = BOT_USER_ID,
    event_id: str | None = None,
    event_time: int | None = None,
) -> JsonDict:
    """Wrap ``event`` in the ``event_callback`` envelope Slack POSTs for the Events API."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "context_team_id": team_id,
        "context_enterprise_id": None,
        "api_app_id": api_app_id,
        "event": dict(event),
        "type": "event_callback",
        "event_id": event_id or f"Ev{_next_id():09d}",
        "event_time": event_time if event_time is not None else int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": bot_user_id,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-{_next_id():016x}",
    }


def app_mention(
    *,
    user: str,
    channel: str,
    text: str,
    ts: str | None = None,
    thread_ts: str | None = None,
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    bot_user_id: str = BOT_USER_ID,
    event_id: str | None = None,
) -> JsonDict:
    """An ``app_mention`` event_callback (``text`` should contain ``<@U0BOT>``); in a thread if ``thread_ts``."""
    ts = ts or _new_ts()
    event: JsonDict = {
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "client_msg_id": f"{_next_id():08x}-0000-4000-8000-000000000000",
        "team": team_id,
        "blocks": rich_text(text),
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event_callback(event, team_id=team_id, api_app_id=api_app_id, bot_user_id=bot_user_id, event_id=event_id)


def message_event(
    *,
    channel: str,
    text: str,
    user: str | None = None,
    ts: str | None = None,
    thread_ts: str | None = None,
    parent_user_id: str | None = None,
    bot_id: str | None = None,
    subtype: str | None = None,
    channel_type: str = "channel",
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    bot_user_id: str = BOT_USER_ID,
    event_id: str | None = None,
    **extra: Any,
) -> JsonDict:
    """A ``message`` event_callback.

    A human's thread reply: ``user``, ``thread_ts`` (and ``parent_user_id``). A bot's message: ``bot_id`` (with
    ``subtype="bot_message"`` for legacy bot posts). Other subtypes (``message_changed``, ``channel_join``...) via
    ``subtype`` and ``extra`` fields.
    """
    ts = ts or _new_ts()
    event: JsonDict = {"type": "message", "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    if subtype is not None:
        event["subtype"] = subtype
    if user is not None:
        event["user"] = user
        event["team"] = team_id
    if bot_id is not None:
        event["bot_id"] = bot_id
        event["app_id"] = APP_ID if bot_id == BOT_ID else f"A{bot_id[1:]}"
    if user is not None and bot_id is None and subtype is None:
        event["client_msg_id"] = f"{_next_id():08x}-0000-4000-8000-000000000000"
        event["blocks"] = rich_text(text)
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
        if parent_user_id is not None:
            event["parent_user_id"] = parent_user_id
    event["channel_type"] = channel_type
    event.update(extra)
    return event_callback(event, team_id=team_id, api_app_id=api_app_id, bot_user_id=bot_user_id, event_id=event_id)


def message_events(team: Team, *, user: str, channel: str, text: str, ts: str, thread_ts: str | None) -> list[JsonDict]:
    """What Slack sends for a person's message.

    A ``message`` event, plus an ``app_mention`` if it mentions the bot outside a DM.
    """
    direct = channel.startswith("D")
    ids: dict[str, Any] = {"team_id": team.team_id, "api_app_id": team.app_id, "bot_user_id": team.bot_user_id}
    sent = [
        message_event(
            channel=channel,
            text=text,
            user=user,
            ts=ts,
            thread_ts=thread_ts or None,
            parent_user_id=team.bot_user_id if thread_ts else None,
            channel_type="im" if direct else "channel",
            **ids,
        )
    ]
    if f"<@{team.bot_user_id}>" in text and not direct:
        sent.append(app_mention(user=user, channel=channel, text=text, ts=ts, thread_ts=thread_ts or None, **ids))
    return sent


def app_home_opened(team: Team, *, user: str, channel: str, view: Mapping[str, Any] | None) -> JsonDict:
    """What Slack sends when ``user`` opens the app's Home tab (``view``: the one published for them, if any)."""
    event: JsonDict = {"type": "app_home_opened", "user": user, "channel": channel, "tab": "home"}
    event["event_ts"] = _new_ts()
    if view is not None:
        event["view"] = dict(view)
    return event_callback(event, team_id=team.team_id, api_app_id=team.app_id, bot_user_id=team.bot_user_id)


def url_verification(challenge: str | None = None) -> JsonDict:
    """The handshake Slack sends when the Request URL is configured; the app must echo ``challenge``."""
    return {
        "token": VERIFICATION_TOKEN,
        "challenge": challenge or f"challenge-{_next_id():08d}",
        "type": "url_verification",
    }


# ---------------------------------------------------------------------------------------------------- interactivity


def _user(user_id: str, username: str | None, team_id: str) -> JsonDict:
    name = username or user_id.lower()
    return {"id": user_id, "username": name, "name": name, "team_id": team_id}


def _clicked(action_id: str, block_id: str, value: str | None, button_text: str | None, style: str | None) -> JsonDict:
    """The ``actions[0]`` entry Slack sends for a click on a button."""
    action: JsonDict = {
        "action_id": action_id,
        "block_id": block_id,
        "text": {"type": "plain_text", "text": button_text or action_id.replace("_", " ").title(), "emoji": True},
        "type": "button",
        "action_ts": _new_ts(),
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
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    trigger_id: str | None = None,
    response_url: str | None = None,
    button_text: str | None = None,
    style: str | None = None,
    is_ephemeral: bool = False,
    channel_name: str = "general",
    team_domain: str = TEAM_DOMAIN,
    message: Mapping[str, Any] | None = None,
) -> JsonDict:
    """A ``block_actions`` payload for a button click on the bot's message ``message_ts`` in ``channel_id``.

    ``response_url`` defaults to a hooks.slack.com URL; pass ``FakeSlack.response_url(...)`` if the app uses it.
    ``message`` is the message as Slack shows it (default: the bot's, with ``blocks`` and ``message_text``).
    """
    action = _clicked(action_id, block_id or f"b{_next_id():05d}", value, button_text, style)
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
        "app_id": api_app_id,
        "text": message_text,
        "team": team_id,
        "blocks": [dict(b) for b in blocks] if blocks is not None else [],
    }
    if thread_ts is not None:
        container["thread_ts"] = thread_ts
        shown["thread_ts"] = thread_ts
    if message is not None:
        shown = {k: v for k, v in message.items() if not k.startswith("_")}
    payload: JsonDict = {
        "type": "block_actions",
        "user": _user(user_id, username, team_id),
        "api_app_id": api_app_id,
        "token": VERIFICATION_TOKEN,
        "container": container,
        "trigger_id": trigger_id or new_trigger_id(),
        "team": {"id": team_id, "domain": team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel_id, "name": channel_name},
        "state": {"values": {}},
        "response_url": response_url or _response_url(team_id),
        "actions": [action],
    }
    if not is_ephemeral:
        payload["message"] = shown
    return payload


def home_block_actions(
    team: Team, *, user: str, view: Mapping[str, Any], action: Mapping[str, Any], block_id: str, trigger_id: str
) -> JsonDict:
    """A click on the button ``action`` (as the view shows it) of the App Home tab ``view``.

    A view container, and no channel or message.
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
        "enterprise": None,
        "is_enterprise_install": False,
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
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    trigger_id: str | None = None,
    title: str = "Signoff",
    team_domain: str = TEAM_DOMAIN,
    view: Mapping[str, Any] | None = None,
) -> JsonDict:
    """A ``view_submission`` payload for the modal ``callback_id``.

    ``values`` maps block_id -> action_id -> a string (a ``plain_text_input`` value; ``None`` for an empty input) or a
    full state element dict (e.g. ``{"type": "static_select", "selected_option": {...}}``). ``view`` is the modal as
    Slack keeps it (default: one built from ``callback_id``, ``private_metadata``, ``blocks``...); its state becomes
    ``values``.
    """
    view_id = view_id or f"V{_next_id():08d}"
    state = {"values": _state_values(values or {})}
    submitted: JsonDict = {
        "id": view_id,
        "team_id": team_id,
        "type": "modal",
        "blocks": [dict(b) for b in blocks] if blocks is not None else [],
        "private_metadata": private_metadata,
        "callback_id": callback_id,
        "state": state,
        "hash": f"{int(time.time())}.{_next_id():08d}",
        "title": {"type": "plain_text", "text": title, "emoji": True},
        "clear_on_close": False,
        "notify_on_close": False,
        "close": {"type": "plain_text", "text": "Cancel", "emoji": True},
        "submit": {"type": "plain_text", "text": "Submit", "emoji": True},
        "previous_view_id": None,
        "root_view_id": view_id,
        "app_id": api_app_id,
        "external_id": external_id,
        "app_installed_team_id": team_id,
        "bot_id": BOT_ID,
    }
    return {
        "type": "view_submission",
        "team": {"id": team_id, "domain": team_domain},
        "user": _user(user_id, username, team_id),
        "api_app_id": api_app_id,
        "token": VERIFICATION_TOKEN,
        "trigger_id": trigger_id or new_trigger_id(),
        "view": submitted if view is None else {**view, "state": state},
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }


def slash_command(
    *,
    command: str,
    user_id: str,
    channel_id: str,
    text: str = "",
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    user_name: str | None = None,
    channel_name: str = "general",
    trigger_id: str | None = None,
    response_url: str | None = None,
    team_domain: str = TEAM_DOMAIN,
) -> dict[str, str]:
    """The form fields of a slash command invocation (all strings, as Slack sends them)."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "team_domain": team_domain,
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name or user_id.lower(),
        "command": command,
        "text": text,
        "api_app_id": api_app_id,
        "is_enterprise_install": "false",
        "response_url": response_url or f"https://hooks.slack.com/commands/{team_id}/{1_000_000 + _next_id()}/x",
        "trigger_id": trigger_id or new_trigger_id(),
    }


# ---------------------------------------------------------------------------------------------------- encoding


def encode_event(body: Mapping[str, Any]) -> bytes:
    """Events API bodies are compact JSON."""
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def encode_payload(payload: Mapping[str, Any]) -> bytes:
    """Interaction payloads are one form field, ``payload=<json>``."""
    return urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode("utf-8")


def encode_command(fields: Mapping[str, str]) -> bytes:
    """A slash command's fields as the form body Slack posts."""
    return urlencode(dict(fields)).encode("utf-8")


def sign(signing_secret: str, timestamp: int | str, body: bytes) -> str:
    """``v0=`` + hex HMAC-SHA256 of ``v0:{timestamp}:{body}`` keyed with the signing secret."""
    base = b"v0:" + str(timestamp).encode("ascii") + b":" + body
    return "v0=" + hmac.new(signing_secret.encode("utf-8"), base, hashlib.sha256).hexdigest()


# ---------------------------------------------------------------------------------------------------- transport


class PostOptions(TypedDict, total=False):
    """How to tamper with a request. Without options it is signed correctly with the current time."""

    forge: bool  # sign with a wrong secret
    stale: bool  # timestamp STALE_SECONDS in the past (signed correctly for that timestamp)
    timestamp: int  # an explicit X-Slack-Request-Timestamp (signed correctly for it)
    signature: str  # send this X-Slack-Signature verbatim
    unsigned: bool  # send neither signature nor timestamp header
    retry_num: int  # X-Slack-Retry-Num (with X-Slack-Retry-Reason), as on Slack's redeliveries
    retry_reason: str
    headers: Mapping[str, str]  # extra headers, last word


class PostResult(NamedTuple):
    """The bot's answer to one request: its status, headers (lower-case names) and body."""

    status: int
    headers: dict[str, str]  # lower-case names
    body: str

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)

    def json_object(self) -> JsonDict | None:
        """The body as a JSON object, or ``None`` when it is not one (an empty ack, say)."""
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


class SentRequest(NamedTuple):
    """Exactly what was sent, for ``SignedPoster.replay``."""

    body: bytes
    headers: dict[str, str]


_RETRYABLE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class SignedPoster:
    """POSTs signed Slack requests to ``base_url`` + ``path`` (Bolt's default ``/slack/events``).

    One keep-alive ``http.client`` connection per thread is reused (reopened when the server closes it; wsgiref
    answers HTTP/1.0 and closes after every response, which ``http.client`` handles transparently).
    """

    def __init__(self, base_url: str, signing_secret: str, *, path: str = "/slack/events", timeout: float = 10) -> None:
        """Post to ``path`` under the ``http://`` ``base_url``, signed with ``signing_secret``; nothing opened yet."""
        split = urlsplit(base_url)
        if split.scheme != "http" or split.hostname is None:
            raise ValueError(f"expected an http:// base URL, got {base_url!r}")
        self.signing_secret = signing_secret
        self.host = split.hostname
        self.port = split.port or 80
        self.path = split.path.rstrip("/") + "/" + path.lstrip("/")
        self.timeout = timeout
        self.last: SentRequest | None = None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[http.client.HTTPConnection] = []

    # -------------------------------------------------------------- the four kinds of request

    def post_event(self, body: Mapping[str, Any], **options: Unpack[PostOptions]) -> PostResult:
        """An Events API request (``event_callback``, ``url_verification``) as JSON."""
        return self.post_raw(encode_event(body), "application/json", **options)

    def post_action(self, payload: Mapping[str, Any], **options: Unpack[PostOptions]) -> PostResult:
        """A ``block_actions`` (or any interaction) payload as ``payload=<json>``."""
        return self.post_raw(encode_payload(payload), "application/x-www-form-urlencoded", **options)

    def post_view_submission(self, payload: Mapping[str, Any], **options: Unpack[PostOptions]) -> PostResult:
        """A ``view_submission`` payload as ``payload=<json>``."""
        return self.post_raw(encode_payload(payload), "application/x-www-form-urlencoded", **options)

    def post_command(self, fields: Mapping[str, str], **options: Unpack[PostOptions]) -> PostResult:
        """A slash command as form fields."""
        return self.post_raw(encode_command(fields), "application/x-www-form-urlencoded", **options)

    # -------------------------------------------------------------- raw, malformed and replayed requests

    def post_raw(self, body: bytes | str, content_type: str, **options: Unpack[PostOptions]) -> PostResult:
        """POST any body (e.g. malformed JSON or a form without ``payload``), signed per ``options``."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        headers = {"Content-Type": content_type, "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)"}
        headers.update(self._signature_headers(data, options))
        if "retry_num" in options:
            headers["X-Slack-Retry-Num"] = str(options["retry_num"])
            headers["X-Slack-Retry-Reason"] = options.get("retry_reason", "http_timeout")
        headers.update(options.get("headers", {}))
        self.last = SentRequest(data, headers)
        return self.send(data, headers)

    def replay(self, request: SentRequest | None = None) -> PostResult:
        """Send the last (or the given) request again, byte for byte: same body, timestamp and signature."""
        request = request or self.last
        if request is None:
            raise RuntimeError("nothing was sent yet")
        return self.send(request.body, request.headers)

    def _signature_headers(self, body: bytes, options: PostOptions) -> dict[str, str]:
        if options.get("unsigned"):
            return {}
        timestamp = options.get("timestamp", int(time.time()) - (STALE_SECONDS if options.get("stale") else 0))
        secret = self.signing_secret + "-forged" if options.get("forge") else self.signing_secret
        signature = options.get("signature", sign(secret, timestamp, body))
        return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": signature}

    # -------------------------------------------------------------- HTTP

    def send(self, body: bytes, headers: Mapping[str, str]) -> PostResult:
        """POST ``body`` with exactly ``headers`` (plus Host / Content-Length) on this thread's connection."""
        for attempt in range(2):
            connection = self._connection()
            try:
                connection.request("POST", self.path, body=body, headers=dict(headers))
                response = connection.getresponse()
                text = response.read().decode("utf-8", errors="replace")
            except _RETRYABLE:
                # A kept-alive connection the server had already closed: reopen once.
                connection.close()
                if attempt == 1:
                    raise
                continue
            if response.will_close:
                connection.close()  # reopened by http.client on the next request
            return PostResult(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
        raise AssertionError("unreachable")

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def close(self) -> None:
        """Close every thread's connection; the next request opens a new one."""
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()
        self._local = threading.local()

    def __enter__(self) -> Self:
        """The poster itself; connections open as requests are sent."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Close the connections (``close``)."""
        self.close()
