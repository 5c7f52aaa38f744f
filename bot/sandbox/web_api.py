"""An in-memory Slack Web API on a loopback port: the sandbox's Slack stand-in and the tests' fake Slack.

``FakeSlack`` is a context manager; ``fake.url`` (``http://127.0.0.1:<port>/api/``) is what ``slack_sdk.WebClient``
takes as ``base_url``. It answers the methods the bot uses with the shapes ``slack_sdk`` expects, keeps the resulting
workspace state (messages with updates applied, ephemerals, views), records every call, and can inject failures:
HTTP 429 with ``Retry-After``, HTTP 5xx, ``ok: false`` errors and slow answers.

Requests are accepted the way ``slack_sdk`` sends them: form-encoded (``blocks`` as a JSON string in a field), JSON
(``Content-Type: application/json``), multipart, and query-string parameters. The bot token is checked from the
``Authorization: Bearer`` header (or a ``token`` field, which Slack also accepts).

Socket Mode: ``apps.connections.open`` (which takes the app-level ``xapp-`` token, and only that) answers with the URL
``socket_mode_url()`` gives; here there is none (``ok: false``), ``tests.bot.support.fake_slack`` adds a Socket Mode
server.

Every state change bumps ``version``; ``wait_for_change`` blocks until it moves (the sandbox page long-polls on it).

Longer than most modules: it is one stand-in for one API, and its methods share the workspace state.
"""

from __future__ import annotations

import contextlib
import copy
import email.parser
import email.policy
import itertools
import json
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["RESPONSE_URL_METHOD", "Call", "FakeSlack", "SlackError", "parse_request_args", "ts_key"]

JsonDict = dict[str, Any]

# Arguments that carry JSON documents; in form-encoded requests they arrive as JSON strings.
_JSON_FIELDS = frozenset({"blocks", "attachments", "view", "metadata", "user_auth_blocks"})

# Methods that take the app-level (xapp-) token and no other; every other method refuses it.
_APP_TOKEN_METHODS = frozenset({"apps.connections.open"})

# The recorded pseudo-method for POSTs to a URL from ``FakeSlack.response_url``.
RESPONSE_URL_METHOD = "response_url"

# Slack's published limits, enforced as Slack does so that a message the fake takes Slack takes too.
MESSAGE_TEXT_MAX = 40_000  # a message's ``text``: msg_too_long
MESSAGE_BLOCKS_MAX = 50  # blocks in a message (a view takes 100): invalid_blocks
VIEW_BLOCKS_MAX = 100
SECTION_TEXT_MAX = 3_000  # a section's text: invalid_blocks
HEADER_TEXT_MAX = 150
CONTEXT_ELEMENTS_MAX = 10
# All the text a message's blocks carry: msg_blocks_too_long. Slack documents no exact figure; the
# cut-off is reported between about 12,000 and 13,300 characters, so the fake takes the lower one.
MESSAGE_BLOCKS_TEXT_MAX = 12_000


def _block_problem(block: object) -> bool:
    if not isinstance(block, dict):
        return True
    text = block.get("text")
    text_length = len(str(text.get("text", ""))) if isinstance(text, dict) else 0
    if block.get("type") == "section" and text_length > SECTION_TEXT_MAX:
        return True
    if block.get("type") == "header" and text_length > HEADER_TEXT_MAX:
        return True
    elements = block.get("elements")
    return block.get("type") == "context" and isinstance(elements, list) and len(elements) > CONTEXT_ELEMENTS_MAX


def _text_characters(node: object) -> int:
    """Characters of every text object in ``node`` (Block Kit JSON)."""
    if isinstance(node, dict):
        own = len(node["text"]) if isinstance(node.get("text"), str) else 0
        return own + sum(_text_characters(value) for value in node.values())
    if isinstance(node, list):
        return sum(_text_characters(value) for value in node)
    return 0


def message_limit_error(args: JsonDict) -> str | None:
    """The error Slack answers for a message (``text``, ``blocks``) over its limits, or ``None``."""
    if len(str(args.get("text") or "")) > MESSAGE_TEXT_MAX:
        return "msg_too_long"
    blocks = args.get("blocks")
    if not isinstance(blocks, list):
        return None
    if len(blocks) > MESSAGE_BLOCKS_MAX or any(_block_problem(block) for block in blocks):
        return "invalid_blocks"
    return "msg_blocks_too_long" if _text_characters(blocks) > MESSAGE_BLOCKS_TEXT_MAX else None


@dataclass(frozen=True)
class Call:
    """One request the fake received.

    ``args`` is fully parsed (query string and body merged; JSON-string fields such as ``blocks`` decoded);
    ``headers`` has lower-case names; ``at`` is ``time.monotonic()`` on arrival; ``status`` and ``response`` are what
    the fake answered (``response`` is the JSON body, ``{}`` when it was not JSON).
    """

    method: str
    args: JsonDict
    headers: dict[str, str]
    at: float
    status: int = 200
    response: JsonDict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the fake answered HTTP 200 with ``ok: true``."""
        return self.status == 200 and bool(self.response.get("ok"))

    @property
    def error(self) -> str | None:
        """The Slack error code the fake answered with, if any."""
        error = self.response.get("error")
        return str(error) if error is not None else None


@dataclass
class _Fault:
    kind: str  # "status" | "error" | "slow"
    times: int
    status: int = 200
    retry_after: int | None = None
    error: str = ""
    seconds: float = 0.0


@dataclass
class _Reply:
    status: int
    body: bytes
    content_type: str = "application/json; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class SlackError(Exception):
    """A Web API method fails with this Slack error code (answered as ``ok: false``)."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


def ts_key(ts: str) -> tuple[int, int]:
    """Sort key for Slack timestamps (``"1700000000.000100"``)."""
    seconds, _, fraction = ts.partition(".")
    return int(seconds), int(fraction.ljust(6, "0")[:6] or 0)


def _decode_json_fields(args: JsonDict) -> JsonDict:
    for name in _JSON_FIELDS:
        value = args.get(name)
        if isinstance(value, str) and value.strip()[:1] in {"[", "{"}:
            # Undecodable JSON stays a string; the method then answers invalid_blocks / invalid_arguments.
            with contextlib.suppress(json.JSONDecodeError):
                args[name] = json.loads(value)
    return args


def _parse_multipart(content_type: str, body: bytes) -> JsonDict:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    args: JsonDict = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            continue
        try:
            args[str(name)] = payload.decode("utf-8")
        except UnicodeDecodeError:
            args[str(name)] = payload
    return args


def parse_request_args(query: str, content_type: str, body: bytes) -> JsonDict:
    """Merge the query string and the body (form, JSON or multipart) into one argument dict."""
    args: JsonDict = dict(parse_qsl(query, keep_blank_values=True))
    media_type = content_type.split(";", 1)[0].strip().lower()
    if body:
        if media_type == "application/json":
            parsed = json.loads(body.decode("utf-8"))
            if not isinstance(parsed, dict):
                raise ValueError("JSON body is not an object")
            args.update(parsed)
        elif media_type == "multipart/form-data":
            args.update(_parse_multipart(content_type, body))
        else:
            args.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    return _decode_json_fields(args)


def _truthy(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.lower() in {"1", "true"}) or value == 1


def _json(data: JsonDict) -> bytes:
    return json.dumps(data).encode("utf-8")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        super().__init__(fake.bind, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), which can stall on a DNS lookup; a loopback name will do.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return  # a client hung up; nothing to report
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive for clients that want it
    timeout = 30  # seconds an idle keep-alive connection may hold a thread
    server: _Server

    def do_POST(self) -> None:
        self._dispatch()

    def do_GET(self) -> None:
        self._dispatch()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``FakeSlack.calls()`` instead of an access log."""

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.server.fake._handle(self.path, headers, body)
        if reply.delay > 0:
            self.server.fake._closing.wait(reply.delay)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(reply.body)


class FakeSlack:
    """A thread-safe, in-memory Slack Web API served on ``127.0.0.1:<random port>``.

    Use as a context manager (or ``start()`` / ``close()``). Configure users with ``add_user``, user groups with
    ``set_usergroup``, channel members with ``set_channel_members``; read state with ``calls``, ``wait_for``,
    ``messages``, ``message``, ``ephemerals``, ``views``; inject failures with ``fail_next``, ``error_next`` and
    ``slow_next``.
    """

    def __init__(
        self,
        *,
        token: str = "xoxb-test-token",
        app_token: str = "xapp-1-A0APP-1-test-token",
        team_id: str = "T0TEST",
        team: str = "Test Team",
        bot_user_id: str = "U0BOT",
        bot_id: str = "B0BOT",
        app_id: str = "A0APP",
        users: Mapping[str, Mapping[str, Any]] | None = None,
        usergroups: Mapping[str, Sequence[str]] | None = None,
        channels: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.token = token
        self.app_token = app_token
        self.team_id = team_id
        self.team = team
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.app_id = app_id
        self._tokens = {token}
        self._app_tokens = {app_token}
        self._version = 0
        self.bind: tuple[str, int] = ("127.0.0.1", 0)  # where start() listens
        self._cond = threading.Condition(threading.RLock())
        self._closing = threading.Event()
        self._calls: list[Call] = []
        self._faults: dict[str, list[_Fault]] = {}
        self._messages: dict[str, dict[str, JsonDict]] = {}
        self._ephemerals: list[JsonDict] = []
        self._views: dict[str, JsonDict] = {}
        self._home_views: dict[str, str] = {}
        self._users: dict[str, JsonDict] = {}
        self._usergroups: dict[str, list[str]] = {}
        self._channel_members: dict[str, list[str]] = {}
        self._open_dms: set[str] = set()
        self._response_urls: dict[str, tuple[str | None, str | None, str | None]] = {}
        self._ts_counter = itertools.count(1)
        self._id_counter = itertools.count(1)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._methods: dict[str, Callable[[JsonDict], JsonDict]] = {
            "auth.test": self._auth_test,
            "apps.connections.open": self._apps_connections_open,
            "chat.postMessage": self._chat_post_message,
            "chat.update": self._chat_update,
            "chat.delete": self._chat_delete,
            "chat.postEphemeral": self._chat_post_ephemeral,
            "chat.getPermalink": self._chat_get_permalink,
            "views.open": self._views_open,
            "views.update": self._views_update,
            "views.publish": self._views_publish,
            "usergroups.users.list": self._usergroups_users_list,
            "users.info": self._users_info,
            "conversations.open": self._conversations_open,
            "conversations.members": self._conversations_members,
            "conversations.replies": self._conversations_replies,
            "conversations.history": self._conversations_history,
        }
        self.add_user(bot_user_id, name="signoff", real_name="Signoff", is_bot=True, tz="America/Los_Angeles")
        for user_id, attributes in (users or {}).items():
            self.add_user(user_id, **attributes)
        for group_id, members in (usergroups or {}).items():
            self.set_usergroup(group_id, members)
        for channel_id, members in (channels or {}).items():
            self.set_channel_members(channel_id, members)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        if self._server is None:
            self._closing.clear()
            self._server = _Server(self)
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="FakeSlack", daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        self._closing.set()  # wakes handlers sleeping in slow_next
        with self._cond:
            self._cond.notify_all()
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    @property
    def url(self) -> str:
        """The Web API base URL (ends in ``/``) for ``WebClient(base_url=...)``."""
        if self._server is None:
            raise RuntimeError("FakeSlack is not running; use it as a context manager or call start()")
        return f"http://127.0.0.1:{self._server.server_port}/api/"

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._server is None:
            raise RuntimeError("FakeSlack is not running; use it as a context manager or call start()")
        return int(self._server.server_port)

    @property
    def version(self) -> int:
        """A counter bumped by every state change (calls, seeded messages)."""
        with self._cond:
            return self._version

    def wait_for_change(self, since: int, timeout: float) -> int:
        """Block until ``version`` differs from ``since`` (or ``timeout`` passes, or the server closes); return it."""
        with self._cond:
            self._cond.wait_for(lambda: self._version != since or self._closing.is_set(), timeout=timeout)
            return self._version

    def socket_mode_url(self) -> str:
        """The ``ws://`` URL ``apps.connections.open`` answers with; override to offer Socket Mode."""
        raise SlackError("not_allowed")

    def _changed(self) -> None:
        """Record a state change and wake waiters (the lock is held)."""
        self._version += 1
        self._cond.notify_all()

    # ------------------------------------------------------------------ configuration

    def add_token(self, token: str) -> None:
        """Accept another bearer token."""
        with self._cond:
            self._tokens.add(token)

    def add_app_token(self, token: str) -> None:
        """Accept another app-level (``xapp-``) token for ``apps.connections.open``."""
        if not token.startswith("xapp-"):
            raise ValueError("app-level tokens start with xapp-")
        with self._cond:
            self._app_tokens.add(token)

    def add_user(
        self,
        user_id: str,
        *,
        name: str | None = None,
        real_name: str | None = None,
        display_name: str | None = None,
        tz: str = "UTC",
        is_bot: bool = False,
        deleted: bool = False,
        email: str | None = None,
        **extra: Any,
    ) -> JsonDict:
        """Add (or replace) a user answered by ``users.info``; returns the user object."""
        name = name or user_id.lower()
        real_name = real_name if real_name is not None else name.title()
        try:
            now = datetime.now(ZoneInfo(tz))
            offset = now.utcoffset()
            tz_offset = int(offset.total_seconds()) if offset is not None else 0
            tz_label = now.tzname() or tz
        except (ZoneInfoNotFoundError, ValueError):
            tz_offset, tz_label = 0, tz
        profile: JsonDict = {
            "real_name": real_name,
            "real_name_normalized": real_name,
            "display_name": display_name if display_name is not None else name,
            "display_name_normalized": display_name if display_name is not None else name,
            "team": self.team_id,
            "image_48": f"https://avatars.example/{user_id}_48.png",
        }
        if email is not None:
            profile["email"] = email
        if is_bot:
            profile["bot_id"] = self.bot_id if user_id == self.bot_user_id else f"B{user_id}"
        user: JsonDict = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name,
            "deleted": deleted,
            "real_name": real_name,
            "tz": tz,
            "tz_label": tz_label,
            "tz_offset": tz_offset,
            "profile": profile,
            "is_admin": False,
            "is_owner": False,
            "is_bot": is_bot,
            "is_app_user": False,
            "updated": int(time.time()),
            **extra,
        }
        with self._cond:
            self._users[user_id] = user
        return copy.deepcopy(user)

    def set_usergroup(self, group_id: str, members: Sequence[str]) -> None:
        """Set the members ``usergroups.users.list`` answers for ``group_id``."""
        with self._cond:
            self._usergroups[group_id] = list(members)

    def set_channel_members(self, channel_id: str, members: Sequence[str]) -> None:
        """Set the members ``conversations.members`` answers for ``channel_id`` (unset: ``channel_not_found``)."""
        with self._cond:
            self._channel_members[channel_id] = list(members)

    def dm_channel(self, user_id: str) -> str:
        """The DM channel id ``conversations.open`` answers for ``user_id`` (posting to a user id lands there)."""
        return f"D{user_id}"

    def response_url(self, channel: str | None = None, message_ts: str | None = None, user: str | None = None) -> str:
        """A URL on this fake to put in an interaction payload's ``response_url``.

        POSTs to it are recorded as ``method == "response_url"``; ``replace_original`` / ``delete_original`` apply to
        the message ``(channel, message_ts)`` when given, ``response_type: in_channel`` posts to ``channel``; other
        answers are ephemeral messages for ``user``.
        """
        key = f"R{next(self._id_counter):06d}"
        with self._cond:
            self._response_urls[key] = (channel, message_ts, user)
        return f"{self.url.removesuffix('api/')}_response/{key}"

    def add_message(
        self,
        channel: str,
        *,
        user: str,
        text: str,
        ts: str | None = None,
        thread_ts: str | None = None,
        **extra: Any,
    ) -> JsonDict:
        """Seed a message (e.g. a human's reply in a thread) that ``conversations.replies`` will return."""
        with self._cond:
            message: JsonDict = {"type": "message", "user": user, "text": text, "ts": ts or self._next_ts(), **extra}
            if thread_ts is not None:
                message["thread_ts"] = thread_ts
            self._messages.setdefault(channel, {})[message["ts"]] = message
            self._changed()
            return copy.deepcopy(message)

    # ------------------------------------------------------------------ failure injection

    def fail_next(self, method: str, *, status: int = 429, retry_after: int | None = 1, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with HTTP ``status`` (no state change).

        A 429 carries ``Retry-After: retry_after`` (an integer, as ``slack_sdk`` parses it) unless it is ``None``.
        """
        error = "ratelimited" if status == 429 else "fatal_error"
        self._add_fault(method, _Fault("status", times, status=status, retry_after=retry_after, error=error))

    def error_next(self, method: str, error: str, *, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with HTTP 200 ``{"ok": false, "error": error}``."""
        self._add_fault(method, _Fault("error", times, error=error))

    def slow_next(self, method: str, seconds: float, *, times: int = 1) -> None:
        """Delay the answer to the next ``times`` calls of ``method``.

        The call is processed (and recorded) on arrival; only the response is late, as when Slack did the work but
        the client timed out waiting.
        """
        self._add_fault(method, _Fault("slow", times, seconds=seconds))

    def _add_fault(self, method: str, fault: _Fault) -> None:
        if fault.times < 1:
            raise ValueError("times must be at least 1")
        with self._cond:
            self._faults.setdefault(method, []).append(fault)

    def _take_fault(self, method: str) -> _Fault | None:
        queue = self._faults.get(method)
        if not queue:
            return None
        fault = queue[0]
        fault.times -= 1
        if fault.times == 0:
            queue.pop(0)
        return fault

    # ------------------------------------------------------------------ inspection

    def calls(self, method: str | None = None) -> list[Call]:
        """Every call received so far (of ``method``, if given), oldest first."""
        with self._cond:
            return [call for call in self._calls if method is None or call.method == method]

    def clear_calls(self) -> None:
        with self._cond:
            self._calls.clear()

    def wait_for(
        self,
        method: str,
        predicate: Callable[[Call], bool] | None = None,
        count: int = 1,
        timeout: float = 5,
    ) -> list[Call]:
        """Block until at least ``count`` calls of ``method`` (matching ``predicate``) were received; return them all.

        Raises ``AssertionError`` after ``timeout`` seconds, listing what did arrive.
        """

        def matching() -> list[Call]:
            return [c for c in self._calls if c.method == method and (predicate is None or predicate(c))]

        with self._cond:
            satisfied = self._cond.wait_for(lambda: len(matching()) >= count, timeout=timeout)
            found = matching()
            received = [f"{c.method}:{c.status}:{c.error or 'ok'}" for c in self._calls]
        if not satisfied:
            raise AssertionError(
                f"timed out after {timeout}s waiting for {count} matching {method} call(s); "
                f"{len(found)} matched; received: {received}"
            )
        return found

    def messages(self, channel: str, thread_ts: str | None = None) -> list[JsonDict]:
        """Current state of the messages in ``channel`` (updates applied, deletions removed), oldest first.

        Without ``thread_ts``: every message in the channel, replies included. With it: the thread as
        ``conversations.replies`` returns it — the parent first, then the replies.
        """
        with self._cond:
            return [copy.deepcopy(m) for m in self._channel_messages(channel, thread_ts)]

    def message(self, channel: str, ts: str) -> JsonDict:
        """The current state of one message; ``KeyError`` if there is none."""
        with self._cond:
            return copy.deepcopy(self._render(channel, self._messages.get(channel, {})[ts]))

    def ephemerals(self, user: str | None = None) -> list[JsonDict]:
        """Ephemeral messages posted (to ``user``, if given), oldest first; each has channel, user, text, blocks."""
        with self._cond:
            return [copy.deepcopy(e) for e in self._ephemerals if user is None or e.get("user") == user]

    def views(self) -> list[JsonDict]:
        """Every view opened or published, in its current state, oldest first."""
        with self._cond:
            return [copy.deepcopy(v) for v in self._views.values()]

    def view(self, view_id: str) -> JsonDict:
        with self._cond:
            return copy.deepcopy(self._views[view_id])

    def home_view(self, user_id: str) -> JsonDict | None:
        """The App Home view published for ``user_id``, if any."""
        with self._cond:
            view_id = self._home_views.get(user_id)
            return copy.deepcopy(self._views[view_id]) if view_id is not None else None

    # ------------------------------------------------------------------ request handling

    def _handle(self, raw_path: str, headers: dict[str, str], body: bytes) -> _Reply:
        arrived = time.monotonic()
        split = urlsplit(raw_path)
        path = split.path.lstrip("/")
        if path.startswith("_response/"):
            return self._handle_response_url(path.removeprefix("_response/"), headers, body, arrived)
        method = path.removeprefix("api/")
        reply_headers: dict[str, str]
        with self._cond:
            try:
                args = parse_request_args(split.query, headers.get("content-type", ""), body)
            except (ValueError, UnicodeDecodeError):
                args = {"_raw": body}
                status, data, reply_headers, delay = 200, {"ok": False, "error": "invalid_json"}, {}, 0.0
            else:
                status, data, reply_headers, delay = self._answer(method, args, headers)
            # Recorded with the state change under one lock hold: whoever wait_for()s the call sees its effect.
            self._calls.append(Call(method, copy.deepcopy(args), dict(headers), arrived, status, copy.deepcopy(data)))
            self._changed()
        return _Reply(status, _json(data), headers=reply_headers, delay=delay)

    def _answer(
        self, method: str, args: JsonDict, headers: dict[str, str]
    ) -> tuple[int, JsonDict, dict[str, str], float]:
        """Status, JSON body, extra headers and delay for one call; applies its effect (the lock is held)."""
        auth_error = self._check_auth(method, headers, args)
        if auth_error is not None:
            return 200, {"ok": False, "error": auth_error}, {}, 0.0
        fault = self._take_fault(method)
        if fault is not None and fault.kind == "status":
            reply_headers: dict[str, str] = {}
            if fault.status == 429 and fault.retry_after is not None:
                reply_headers["Retry-After"] = str(fault.retry_after)
            return fault.status, {"ok": False, "error": fault.error}, reply_headers, 0.0
        if fault is not None and fault.kind == "error":
            return 200, {"ok": False, "error": fault.error}, {}, 0.0
        handler = self._methods.get(method)
        if handler is None:
            return 404, {"ok": False, "error": "unknown_method"}, {}, 0.0
        try:
            data = {"ok": True, **handler(args)}
        except SlackError as error:
            data = {"ok": False, "error": error.error}
        return 200, data, {}, fault.seconds if fault is not None and fault.kind == "slow" else 0.0

    def _check_auth(self, method: str, headers: dict[str, str], args: JsonDict) -> str | None:
        authorization = headers.get("authorization", "")
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer":
                return "invalid_auth"
        else:
            token = str(args.get("token", ""))
            if not token:
                return "not_authed"
        token = token.strip()
        app_level = method in _APP_TOKEN_METHODS
        if token in (self._tokens if app_level else self._app_tokens):
            return "not_allowed_token_type"  # a bot token for an app-level method, or the other way round
        return None if token in (self._app_tokens if app_level else self._tokens) else "invalid_auth"

    def _handle_response_url(self, key: str, headers: dict[str, str], body: bytes, arrived: float) -> _Reply:
        try:
            args = parse_request_args("", headers.get("content-type", "application/json"), body)
        except (ValueError, UnicodeDecodeError):
            args = {"_raw": body}
        with self._cond:
            target = self._response_urls.get(key)
            call = Call(RESPONSE_URL_METHOD, {**copy.deepcopy(args), "_key": key}, dict(headers), arrived, 200)
            if target is None:
                call = Call(call.method, call.args, call.headers, arrived, 404, {"ok": False, "error": "no_service"})
            else:
                self._apply_response_url(target, args)
            self._calls.append(call)
            self._changed()
        if target is None:
            return _Reply(404, b"no_service", content_type="text/plain; charset=utf-8")
        return _Reply(200, b"ok", content_type="text/html; charset=utf-8")

    def _apply_response_url(self, target: tuple[str | None, str | None, str | None], args: JsonDict) -> None:
        channel, message_ts, user = target
        existing = self._messages.get(channel or "", {}).get(message_ts or "")
        if _truthy(args.get("delete_original")) and existing is not None:
            existing["_deleted"] = True
        elif _truthy(args.get("replace_original")) and existing is not None:
            for name in ("text", "blocks", "attachments"):
                if name in args:
                    existing[name] = args[name]
            existing["edited"] = {"user": self.bot_user_id, "ts": self._next_ts()}
        elif args.get("response_type") == "in_channel" and channel is not None:
            self._store_bot_message(channel, args)
        else:
            self._ephemerals.append({"channel": channel, "user": user, **args, "message_ts": self._next_ts()})

    # ------------------------------------------------------------------ state helpers (lock held)

    def _next_ts(self) -> str:
        micros = next(self._ts_counter) * 100
        return f"{1_700_000_000 + micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _resolve_channel(self, args: JsonDict) -> str:
        channel = str(args.get("channel") or "")
        if not channel:
            raise SlackError("channel_not_found")
        if channel[0] in {"U", "W"}:  # posting to a user id lands in the DM with them
            self._open_dms.add(channel)
            return self.dm_channel(channel)
        return channel

    def _find(self, channel: str, ts: str) -> JsonDict | None:
        message = self._messages.get(channel, {}).get(ts)
        return None if message is None or message.get("_deleted") else message

    def _channel_messages(self, channel: str, thread_ts: str | None) -> list[JsonDict]:
        stored = [m for m in self._messages.get(channel, {}).values() if not m.get("_deleted")]
        if thread_ts is not None:
            stored = [m for m in stored if m["ts"] == thread_ts or m.get("thread_ts") == thread_ts]
        stored.sort(key=lambda m: ts_key(m["ts"]))
        return [self._render(channel, m) for m in stored]

    def _render(self, channel: str, message: JsonDict) -> JsonDict:
        rendered = {k: v for k, v in message.items() if not k.startswith("_")}
        replies = [
            m
            for m in self._messages.get(channel, {}).values()
            if m.get("thread_ts") == message["ts"] and m["ts"] != message["ts"] and not m.get("_deleted")
        ]
        if replies:  # a thread parent, as Slack shows it
            rendered["thread_ts"] = message["ts"]
            rendered["reply_count"] = len(replies)
            rendered["reply_users"] = sorted({str(m.get("user")) for m in replies})
            rendered["latest_reply"] = max((m["ts"] for m in replies), key=ts_key)
        return rendered

    def _validate_blocks(self, args: JsonDict) -> None:
        for name in ("blocks", "attachments"):
            if name in args and not isinstance(args[name], list):
                raise SlackError("invalid_blocks" if name == "blocks" else "invalid_attachments")
        error = message_limit_error(args)
        if error is not None:
            raise SlackError(error)

    def _store_bot_message(self, channel: str, args: JsonDict) -> JsonDict:
        message: JsonDict = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "app_id": self.app_id,
            "team": self.team_id,
            "text": str(args.get("text") or ""),
            "ts": self._next_ts(),
            "bot_profile": {"id": self.bot_id, "app_id": self.app_id, "name": "signoff", "deleted": False},
        }
        for name in ("blocks", "attachments", "metadata"):
            if name in args:
                message[name] = args[name]
        if args.get("thread_ts"):
            message["thread_ts"] = str(args["thread_ts"])
        self._messages.setdefault(channel, {})[message["ts"]] = message
        return message

    # ------------------------------------------------------------------ Web API methods (lock held)

    def _auth_test(self, args: JsonDict) -> JsonDict:
        return {
            "url": f"https://{self.team.lower().replace(' ', '-')}.slack.com/",
            "team": self.team,
            "user": "signoff",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _apps_connections_open(self, args: JsonDict) -> JsonDict:
        return {"url": self.socket_mode_url()}

    def _chat_post_message(self, args: JsonDict) -> JsonDict:
        channel = self._resolve_channel(args)
        self._validate_blocks(args)
        if not (args.get("text") or args.get("blocks") or args.get("attachments")):
            raise SlackError("no_text")
        message = self._store_bot_message(channel, args)
        return {"channel": channel, "ts": message["ts"], "message": copy.deepcopy(message)}

    def _chat_update(self, args: JsonDict) -> JsonDict:
        channel = self._resolve_channel(args)
        self._validate_blocks(args)
        message = self._find(channel, str(args.get("ts") or ""))
        if message is None:
            raise SlackError("message_not_found")
        if message.get("user") != self.bot_user_id:
            raise SlackError("cant_update_message")
        # As in Slack: fields left out keep their previous value; an empty list clears blocks / attachments.
        for name in ("text", "blocks", "attachments", "metadata"):
            if name in args:
                message[name] = args[name]
        message["edited"] = {"user": self.bot_user_id, "ts": self._next_ts()}
        return {"channel": channel, "ts": message["ts"], "text": message["text"], "message": copy.deepcopy(message)}

    def _chat_delete(self, args: JsonDict) -> JsonDict:
        channel = self._resolve_channel(args)
        message = self._find(channel, str(args.get("ts") or ""))
        if message is None:
            raise SlackError("message_not_found")
        message["_deleted"] = True
        return {"channel": channel, "ts": message["ts"]}

    def _chat_post_ephemeral(self, args: JsonDict) -> JsonDict:
        channel = self._resolve_channel(args)
        self._validate_blocks(args)
        user = str(args.get("user") or "")
        if not user:
            raise SlackError("user_not_found")
        if not (args.get("text") or args.get("blocks") or args.get("attachments")):
            raise SlackError("no_text")
        ephemeral: JsonDict = {"channel": channel, "user": user, "text": str(args.get("text") or "")}
        for name in ("blocks", "attachments", "thread_ts"):
            if name in args:
                ephemeral[name] = args[name]
        ephemeral["message_ts"] = self._next_ts()
        self._ephemerals.append(ephemeral)
        return {"message_ts": ephemeral["message_ts"]}

    def _chat_get_permalink(self, args: JsonDict) -> JsonDict:
        channel = self._resolve_channel(args)
        message = self._find(channel, str(args.get("message_ts") or ""))
        if message is None:
            raise SlackError("message_not_found")
        permalink = f"https://test.slack.com/archives/{channel}/p{message['ts'].replace('.', '')}"
        thread_ts = message.get("thread_ts")
        if thread_ts and thread_ts != message["ts"]:
            permalink += f"?thread_ts={thread_ts}&cid={channel}"
        return {"channel": channel, "permalink": permalink}

    def _store_view(self, spec: object, *, view_id: str | None = None, previous: JsonDict | None = None) -> JsonDict:
        if not isinstance(spec, dict) or "type" not in spec:
            raise SlackError("invalid_arguments")
        blocks = spec.get("blocks", [])
        if not isinstance(blocks, list) or len(blocks) > VIEW_BLOCKS_MAX or any(_block_problem(b) for b in blocks):
            raise SlackError("invalid_arguments")
        view_id = view_id or f"V{next(self._id_counter):08d}"
        view: JsonDict = {
            "id": view_id,
            "team_id": self.team_id,
            "type": spec["type"],
            "blocks": spec.get("blocks", []),
            "private_metadata": spec.get("private_metadata", ""),
            "callback_id": spec.get("callback_id", ""),
            "state": {"values": {}},
            "hash": f"{int(time.time())}.{next(self._id_counter):08d}",
            "title": spec.get("title"),
            "clear_on_close": bool(spec.get("clear_on_close", False)),
            "notify_on_close": bool(spec.get("notify_on_close", False)),
            "close": spec.get("close"),
            "submit": spec.get("submit"),
            "previous_view_id": None,
            "root_view_id": previous["root_view_id"] if previous else view_id,
            "app_id": self.app_id,
            "external_id": spec.get("external_id", ""),
            "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        }
        self._views[view_id] = view
        return view

    def _views_open(self, args: JsonDict) -> JsonDict:
        if not args.get("trigger_id"):
            raise SlackError("invalid_arguments")
        return {"view": copy.deepcopy(self._store_view(args.get("view")))}

    def _views_update(self, args: JsonDict) -> JsonDict:
        previous: JsonDict | None = None
        if args.get("view_id"):
            previous = self._views.get(str(args["view_id"]))
        elif args.get("external_id"):
            previous = next((v for v in self._views.values() if v["external_id"] == args["external_id"]), None)
        if previous is None:
            raise SlackError("not_found")
        if args.get("hash") and args["hash"] != previous["hash"]:
            raise SlackError("hash_conflict")
        return {"view": copy.deepcopy(self._store_view(args.get("view"), view_id=previous["id"], previous=previous))}

    def _views_publish(self, args: JsonDict) -> JsonDict:
        user_id = str(args.get("user_id") or "")
        if user_id not in self._users:
            raise SlackError("user_not_found")
        previous_id = self._home_views.get(user_id)
        previous = self._views.get(previous_id) if previous_id else None
        if previous is not None and args.get("hash") and args["hash"] != previous["hash"]:
            raise SlackError("hash_conflict")
        view = self._store_view(args.get("view"), view_id=previous_id, previous=previous)
        self._home_views[user_id] = view["id"]
        return {"view": copy.deepcopy(view)}

    def _usergroups_users_list(self, args: JsonDict) -> JsonDict:
        group_id = str(args.get("usergroup") or "")
        if group_id not in self._usergroups:
            raise SlackError("no_such_subteam")
        return {"users": list(self._usergroups[group_id])}

    def _users_info(self, args: JsonDict) -> JsonDict:
        user = self._users.get(str(args.get("user") or ""))
        if user is None:
            raise SlackError("user_not_found")
        return {"user": copy.deepcopy(user)}

    def _conversations_open(self, args: JsonDict) -> JsonDict:
        if args.get("channel"):
            return {"channel": {"id": str(args["channel"])}, "no_op": True, "already_open": True}
        users = [u.strip() for u in str(args.get("users") or "").split(",") if u.strip()]
        if not users:
            raise SlackError("users_list_not_supplied")
        unknown = [u for u in users if u not in self._users]
        if unknown:
            raise SlackError("user_not_found")
        if len(users) == 1:
            already_open = users[0] in self._open_dms
            self._open_dms.add(users[0])
            channel: JsonDict = {"id": self.dm_channel(users[0])}
            if _truthy(args.get("return_im")):
                channel.update({"created": int(time.time()), "is_im": True, "is_org_shared": False, "user": users[0]})
            return {"channel": channel, "no_op": already_open, "already_open": already_open}
        return {"channel": {"id": "G" + "".join(sorted(users))}}

    def _conversations_members(self, args: JsonDict) -> JsonDict:
        members = self._channel_members.get(str(args.get("channel") or ""))
        if members is None:
            raise SlackError("channel_not_found")
        cursor = str(args.get("cursor") or "0")
        if not cursor.isdigit():
            raise SlackError("invalid_cursor")
        start = int(cursor)
        limit = int(args.get("limit") or 100)
        page = members[start : start + limit]
        after = start + len(page)
        return {"members": page, "response_metadata": {"next_cursor": str(after) if after < len(members) else ""}}

    def _conversations_replies(self, args: JsonDict) -> JsonDict:
        channel = self._resolve_channel(args)
        ts = str(args.get("ts") or "")
        parent = self._find(channel, ts)
        root = str(parent.get("thread_ts") or ts) if parent else ts  # the whole thread for a reply's ts too
        thread = self._channel_messages(channel, root)
        if not thread:  # neither the parent nor a reply (a thread whose parent went keeps its replies)
            raise SlackError("thread_not_found")
        return self._one_page(thread, args)

    def _conversations_history(self, args: JsonDict) -> JsonDict:
        channel = self._resolve_channel(args)
        top_level = [
            m for m in self._channel_messages(channel, None) if m.get("thread_ts") in (None, m["ts"])
        ]  # as in Slack, replies stay in their threads (except the parent)
        return self._one_page(list(reversed(top_level)), args)  # newest first

    def _one_page(self, listed: list[JsonDict], args: JsonDict) -> JsonDict:
        """One page of ``listed`` as conversations.replies / .history answer it.

        ``oldest`` / ``latest`` bound the ts (exclusive unless ``inclusive``), ``limit`` and ``cursor`` page, and
        ``metadata`` is left out unless ``include_all_metadata`` is set, as Slack does.
        """
        inclusive = _truthy(args.get("inclusive"))
        if args.get("oldest"):
            oldest = ts_key(str(args["oldest"]))
            listed = [m for m in listed if ts_key(m["ts"]) > oldest or (inclusive and ts_key(m["ts"]) == oldest)]
        if args.get("latest"):
            latest = ts_key(str(args["latest"]))
            listed = [m for m in listed if ts_key(m["ts"]) < latest or (inclusive and ts_key(m["ts"]) == latest)]
        if not _truthy(args.get("include_all_metadata")):
            listed = [{k: v for k, v in m.items() if k != "metadata"} for m in listed]
        cursor = str(args.get("cursor") or "offset:0")
        if not (cursor.startswith("offset:") and cursor.removeprefix("offset:").isdigit()):
            raise SlackError("invalid_cursor")
        start = int(cursor.removeprefix("offset:"))
        limit = int(args.get("limit") or 0)
        end = start + limit if limit > 0 else len(listed)
        more = end < len(listed)
        return {
            "messages": listed[start:end],
            "has_more": more,
            "response_metadata": {"next_cursor": f"offset:{end}" if more else ""},
        }

    def __repr__(self) -> str:
        where = self.url if self._server is not None else "stopped"
        return f"<FakeSlack {where} calls={len(self._calls)}>"
