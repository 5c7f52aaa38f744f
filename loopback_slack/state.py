"""The workspace the fake keeps: who is in it, and the messages, ephemerals and views the app's calls left.

Plain data and the helpers every API family shares. Not thread-safe on its own: ``LoopbackSlack`` holds its lock
around every read and write.
"""

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loopback_slack.calls import SlackError
from loopback_slack.limits import message_limit_error, view_blocks_problem

JsonDict = dict[str, Any]


def ts_key(ts: str) -> tuple[int, int]:
    """Sort key for Slack timestamps (``"1700000000.000100"``)."""
    seconds, _, fraction = ts.partition(".")
    return int(seconds), int(fraction.ljust(6, "0")[:6] or 0)


@dataclass(frozen=True)
class Identity:
    """The team and the app's bot, as every answer names them."""

    team_id: str
    team: str
    bot_user_id: str
    bot_id: str
    app_id: str


def counting_timestamps() -> Callable[[], str]:
    """Timestamps 100 µs apart from ``1700000000.000100``: the same in every run."""
    counter = itertools.count(1)

    def next_ts() -> str:
        micros = next(counter) * 100
        return f"{1_700_000_000 + micros // 1_000_000}.{micros % 1_000_000:06d}"

    return next_ts


@dataclass
class WorkspaceState:
    """Users, groups, channels, messages (updates applied; deleted ones flagged), ephemerals and views.

    ``next_ts`` makes the timestamps of new messages (strictly increasing).
    """

    identity: Identity
    next_ts: Callable[[], str] = field(default_factory=counting_timestamps)
    users: dict[str, JsonDict] = field(default_factory=dict)
    usergroups: dict[str, list[str]] = field(default_factory=dict)
    channel_members: dict[str, list[str]] = field(default_factory=dict)
    open_dms: set[str] = field(default_factory=set)
    messages: dict[str, dict[str, JsonDict]] = field(default_factory=dict)  # channel -> ts -> message
    ephemerals: list[JsonDict] = field(default_factory=list)
    views: dict[str, JsonDict] = field(default_factory=dict)
    home_views: dict[str, str] = field(default_factory=dict)  # user -> view id
    response_urls: dict[str, tuple[str | None, str | None, str | None]] = field(default_factory=dict)
    _ids: "itertools.count[int]" = field(default_factory=lambda: itertools.count(1))

    def new_id(self) -> int:
        """A fresh number for view ids, view hashes and response URL keys."""
        return next(self._ids)

    # ------------------------------------------------------------------ people

    @staticmethod
    def dm_channel(user_id: str) -> str:
        """The DM channel id ``conversations.open`` answers for ``user_id``."""
        return f"D{user_id}"

    # ------------------------------------------------------------------ messages

    def resolve_channel(self, args: JsonDict) -> str:
        """The ``channel`` argument; a user id means the DM with them (as when posting to a user)."""
        channel = str(args.get("channel") or "")
        if not channel:
            raise SlackError("channel_not_found")
        if channel[0] in {"U", "W"}:
            self.open_dms.add(channel)
            return self.dm_channel(channel)
        return channel

    def find(self, channel: str, ts: str) -> JsonDict | None:
        """The stored message ``ts`` of ``channel`` unless it is gone."""
        message = self.messages.get(channel, {}).get(ts)
        return None if message is None or message.get("_deleted") else message

    def channel_messages(self, channel: str, thread_ts: str | None) -> list[JsonDict]:
        """The live messages of ``channel`` (of one thread, if given) as Slack shows them, oldest first."""
        stored = [m for m in self.messages.get(channel, {}).values() if not m.get("_deleted")]
        if thread_ts is not None:
            stored = [m for m in stored if m["ts"] == thread_ts or m.get("thread_ts") == thread_ts]
        stored.sort(key=lambda m: ts_key(m["ts"]))
        return [self.render(channel, m) for m in stored]

    def render(self, channel: str, message: JsonDict) -> JsonDict:
        """A stored message as Slack shows it: no private fields, and thread facts on a parent."""
        rendered = {k: v for k, v in message.items() if not k.startswith("_")}
        replies = [
            m
            for m in self.messages.get(channel, {}).values()
            if m.get("thread_ts") == message["ts"] and m["ts"] != message["ts"] and not m.get("_deleted")
        ]
        if replies:
            rendered["thread_ts"] = message["ts"]
            rendered["reply_count"] = len(replies)
            rendered["reply_users"] = sorted({str(m.get("user")) for m in replies})
            rendered["latest_reply"] = max((m["ts"] for m in replies), key=ts_key)
        return rendered

    def store_message(self, channel: str, message: JsonDict) -> JsonDict:
        """Keep ``message`` in ``channel`` under its ``ts`` (replacing one with the same ts) and return it."""
        self.messages.setdefault(channel, {})[message["ts"]] = message
        return message

    def store_bot_message(self, channel: str, args: JsonDict) -> JsonDict:
        """Store a message the app posted (``text``, ``blocks``, ``attachments``, ``metadata``, ``thread_ts``)."""
        me = self.identity
        message: JsonDict = {
            "type": "message",
            "user": me.bot_user_id,
            "bot_id": me.bot_id,
            "app_id": me.app_id,
            "team": me.team_id,
            "text": str(args.get("text") or ""),
            "ts": self.next_ts(),
            "bot_profile": {"id": me.bot_id, "app_id": me.app_id, "name": "signoff", "deleted": False},
        }
        for name in ("blocks", "attachments", "metadata"):
            if name in args:
                message[name] = args[name]
        if args.get("thread_ts"):
            message["thread_ts"] = str(args["thread_ts"])
        return self.store_message(channel, message)

    @staticmethod
    def check_message(args: JsonDict) -> None:
        """Raise the ``SlackError`` Slack answers for a message's malformed or oversized ``blocks``/``attachments``."""
        for name in ("blocks", "attachments"):
            if name in args and not isinstance(args[name], list):
                raise SlackError("invalid_blocks" if name == "blocks" else "invalid_attachments")
        error = message_limit_error(args)
        if error is not None:
            raise SlackError(error)

    # ------------------------------------------------------------------ views

    def store_view(self, spec: object, *, view_id: str | None = None, previous: JsonDict | None = None) -> JsonDict:
        """Store a view built from ``spec`` (a new one, or ``view_id`` replaced); ``invalid_arguments`` if malformed."""
        if not isinstance(spec, dict) or "type" not in spec:
            raise SlackError("invalid_arguments")
        if view_blocks_problem(spec.get("blocks", [])):
            raise SlackError("invalid_arguments")
        me = self.identity
        view_id = view_id or f"V{self.new_id():08d}"
        view: JsonDict = {
            "id": view_id,
            "team_id": me.team_id,
            "type": spec["type"],
            "blocks": spec.get("blocks", []),
            "private_metadata": spec.get("private_metadata", ""),
            "callback_id": spec.get("callback_id", ""),
            "state": {"values": {}},
            "hash": f"{int(time.time())}.{self.new_id():08d}",
            "title": spec.get("title"),
            "clear_on_close": bool(spec.get("clear_on_close", False)),
            "notify_on_close": bool(spec.get("notify_on_close", False)),
            "close": spec.get("close"),
            "submit": spec.get("submit"),
            "previous_view_id": None,
            "root_view_id": previous["root_view_id"] if previous else view_id,
            "app_id": me.app_id,
            "external_id": spec.get("external_id", ""),
            "app_installed_team_id": me.team_id,
            "bot_id": me.bot_id,
        }
        self.views[view_id] = view
        return view

    def home_view(self, user_id: str) -> JsonDict | None:
        """The App Home view published for ``user_id``, if any."""
        view_id = self.home_views.get(user_id)
        return self.views[view_id] if view_id is not None else None
