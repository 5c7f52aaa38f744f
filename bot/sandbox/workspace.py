"""The sandbox's Slack stand-in: the Web API the bot calls, plus the page's endpoints that act as Slack's clients.

One HTTP server on one port serves three things:

- ``/api/<method>`` and response URLs: the Web API (``loopback_slack.LoopbackSlack``), what the bot's client calls;
- ``/`` and ``/static/*``: the page;
- ``/sandbox/*``: what the page does as a person (post a message, click a button, submit or close a modal, move the
  clock) and what it reads (``/sandbox/state``, long-polled on the stand-in's ``version``).

A person's actions become the requests Slack would send the bot (``loopback_slack.slack_requests``), signed with
the sandbox's signing secret; the bot's answers (``response_action: errors`` for a modal) come back to the page.
"""

import copy
import json
import mimetypes
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import redis

from bot.domain.errors import RefusedRequest
from bot.sandbox.people import CHANNEL, CHANNEL_NAME, PEOPLE
from bot.store.offset_clock import OffsetClock
from loopback_slack import (
    JsonDict,
    LoopbackSlack,
    Method,
    Reply,
    SlackError,
    WorkspaceState,
    slack_requests,
    submitted_state,
)
from loopback_slack.slack_requests import PostResult, SignedPoster

STATIC_DIR: Final = Path(__file__).with_name("static")
_STATIC_FILES: Final = frozenset({"index.html", "app.js", "app.css"})
_LONG_POLL_S: Final = 15.0
_MAX_ADVANCE_MS: Final = 30 * 24 * 3600 * 1000


class PageError(RefusedRequest):
    """A page request the stand-in refuses (answered as HTTP 400 with the message)."""


class SandboxSlack(LoopbackSlack):
    """The Web API stand-in with the page and its endpoints on the same port."""

    def __init__(self, *, token: str, redis_client: redis.Redis, port: int = 0, host: str = "127.0.0.1") -> None:
        """The sandbox's workspace, stamped by its virtual clock (in ``redis_client``), to serve on ``host:port``."""
        super().__init__(
            token=token,
            team_id="T0SANDBOX",
            team="Signoff Sandbox",
            timestamps=_sandbox_time(OffsetClock(redis_client)),
            bind=(host, port),
        )
        self.redis = redis_client
        self.bot: SignedPoster | None = None
        me = self.identity
        self.space = slack_requests.Team(me.team_id, "sandbox", me.app_id, me.bot_user_id, me.bot_id)
        self._trigger_users: dict[str, str] = {}
        self._view_owners: dict[str, str] = {}
        self._closed_views: set[str] = set()
        self.methods["views.open"] = self._opened_by_a_person(self.methods["views.open"])
        self.add_route("/", _static, exact=True)
        self.add_route("/static/", _static)
        self.add_route("/sandbox/", self._page_request)
        for person in PEOPLE:
            self.add_user(person.user_id, name=person.name, real_name=person.real_name, title=person.role)
        self.set_channel_members(CHANNEL, [me.bot_user_id, *(person.user_id for person in PEOPLE)])

    def connect(self, bot: SignedPoster) -> None:
        """Send people's actions to ``bot`` from now on."""
        self.bot = bot

    # ------------------------------------------------------------------ Web API (lock held)

    def _opened_by_a_person(self, open_view: Method) -> Method:
        """``views.open`` that takes only a trigger id a person's action made, and remembers whose modal it is."""

        def opened(state: WorkspaceState, args: JsonDict) -> JsonDict:
            answer = open_view(state, args)
            user = self._trigger_users.get(str(args.get("trigger_id")))
            if user is None:
                raise SlackError("invalid_trigger_id")
            self._view_owners[answer["view"]["id"]] = user
            return answer

        return opened

    # ------------------------------------------------------------------ routing

    def _page_request(self, _method: str, raw_path: str, headers: dict[str, str], body: bytes) -> Reply:
        split = urlsplit(raw_path)
        path = split.path
        try:
            query = {k: v[-1] for k, v in parse_qs(split.query).items()}
            data = json.loads(body) if body else {}
            if not isinstance(data, dict):
                raise PageError("expected a JSON object")
            answer = self._page(path.removeprefix("/sandbox/"), {**query, **data})
        except (PageError, ValueError, KeyError) as error:
            return Reply.json(400, {"ok": False, "error": str(error)})
        return Reply.json(200, {"ok": True, **answer}, headers={"Cache-Control": "no-store"})

    def _page(self, name: str, args: dict[str, Any]) -> JsonDict:
        if name == "state":
            since = int(args.get("since", -1))
            if since == self.version:
                self.wait_for_change(since, _LONG_POLL_S)
            return self.state(_person({"user": args.get("user") or PEOPLE[0].user_id}))
        if name == "message":
            return self.say(_person(args), str(args["channel"]), str(args["text"]), args.get("thread_ts") or None)
        if name == "action":
            value = args.get("value")
            return self.click(
                _person(args), str(args["channel"]), str(args["ts"]), str(args["action_id"]), _value_of(value)
            )
        if name == "submit":
            return self.submit(_person(args), str(args["view_id"]), args.get("values") or {})
        if name == "close":
            return self.close_view(_person(args), str(args["view_id"]))
        if name == "home_opened":
            return self.open_home(_person(args))
        if name == "home_action":
            value = args.get("value")
            return self.click_home(_person(args), str(args["block_id"]), str(args["action_id"]), _value_of(value))
        if name == "clock":
            return self.advance_clock(int(args.get("advance_ms", 0)))
        raise PageError(f"unknown endpoint {name!r}")

    # ------------------------------------------------------------------ what the page reads

    def state(self, user: str) -> JsonDict:
        """Everything the page shows to ``user``."""
        offset = OffsetClock(self.redis).offset_ms()
        with self.lock:
            space = self.workspace
            channels = sorted({c for c in space.messages if c.startswith(("C", "G"))} | {CHANNEL})
            dm = self.dm_channel(user)
            modal = next(
                (
                    copy.deepcopy(space.views[view_id])
                    for view_id in reversed(list(space.views))
                    if self._view_owners.get(view_id) == user and view_id not in self._closed_views
                ),
                None,
            )
            home = space.home_view(user)
            return {
                "version": self.version,
                "team": self.identity.team,
                "bot": {"id": self.identity.bot_user_id, "name": "signoff"},
                "me": user,
                "people": [person.__dict__ for person in PEOPLE],
                "users": {uid: {"name": u["name"], "real_name": u["real_name"]} for uid, u in space.users.items()},
                "channels": [
                    {"id": c, "name": _channel_name(c), "messages": space.channel_messages(c, None)} for c in channels
                ],
                "dm": {"id": dm, "messages": space.channel_messages(dm, None)},
                "ephemerals": [copy.deepcopy(e) for e in space.ephemerals if e.get("user") == user],
                "modal": modal,
                "home": copy.deepcopy(home),
                "clock": {"offset_ms": offset, "now_ms": int(time.time() * 1000) + offset},
                "connected": self.bot is not None,
            }

    # ------------------------------------------------------------------ what people do

    def say(self, user: str, channel: str, text: str, thread_ts: str | None) -> JsonDict:
        """``user`` posts ``text``; ``@signoff`` becomes a mention; ``/agent ...`` runs the slash command."""
        text = text.strip()
        if not text:
            raise PageError("empty message")
        if text.startswith("/"):
            command, _, rest = text.partition(" ")
            fields = slack_requests.slash_command(
                command=command,
                user_id=user,
                channel_id=channel,
                text=rest.strip(),
                team=self.space,
                channel_name=channel.lower(),
                trigger_id=self._trigger(user),
                response_url=self.response_url(channel, None, user),
            )
            return self._bot_answer(self._bot().post_command(fields))
        text = text.replace("@signoff", f"<@{self.space.bot_user_id}>")
        message = self.add_message(channel, user=user, text=text, thread_ts=thread_ts, team=self.space.team_id)
        answers = [
            self._bot().post_event(event)
            for event in slack_requests.message_events(
                self.space, user=user, channel=channel, text=text, ts=message["ts"], thread_ts=thread_ts
            )
        ]
        return {"ts": message["ts"], "statuses": [a.status for a in answers]}

    def click(self, user: str, channel: str, ts: str, action_id: str, value: str | None = None) -> JsonDict:
        """``user`` clicks the button ``action_id`` of the message (or ephemeral message) ``ts``.

        Of those with that action id, the one carrying ``value``, when given: a message may hold several.
        """
        with self.lock:
            message = self.workspace.find(channel, ts)
            ephemeral = next(
                (e for e in self.workspace.ephemerals if e.get("message_ts") == ts and e.get("user") == user), None
            )
            target = copy.deepcopy(message if message is not None else ephemeral)
        if target is None:
            raise PageError("no such message")
        found = _find_action(target.get("blocks") or [], action_id, value)
        if found is None:
            raise PageError(f"no button {action_id!r} on that message")
        block_id, action = found
        target.setdefault("ts", ts)
        text = action.get("text")
        payload = slack_requests.block_actions(
            action_id=action_id,
            user_id=user,
            channel_id=channel,
            message_ts=ts,
            value=action.get("value"),
            block_id=block_id,
            thread_ts=target.get("thread_ts") or None,
            button_text=str(text.get("text", "")) if isinstance(text, dict) else None,
            style=action.get("style"),
            team=self.space,
            channel_name=channel.lower(),
            trigger_id=self._trigger(user),
            response_url=self.response_url(channel, ts if message is not None else None, user),
            is_ephemeral=message is None,
            message=target,
        )
        return self._bot_answer(self._bot().post_action(payload))

    def click_home(self, user: str, block_id: str, action_id: str, value: str | None = None) -> JsonDict:
        """``user`` clicks the button ``action_id`` in block ``block_id`` of their App Home tab.

        The one carrying ``value``, when given.
        """
        view = self.home_view(user)
        if view is None:
            raise PageError("Signoff has not published a Home tab for you")
        blocks = [block for block in view.get("blocks") or [] if block.get("block_id") == block_id]
        found = _find_action(blocks, action_id, value)
        if found is None:
            raise PageError(f"no button {action_id!r} in block {block_id!r} of your Home tab")
        _block_id, action = found
        payload = slack_requests.home_block_actions(
            self.space, user=user, view=view, action=action, block_id=block_id, trigger_id=self._trigger(user)
        )
        return self._bot_answer(self._bot().post_action(payload))

    def submit(self, user: str, view_id: str, values: dict[str, Any]) -> JsonDict:
        """``user`` submits the modal ``view_id`` with ``values``.

        ``values``: block_id -> action_id -> what they chose (the text of a text or number input, the value of a
        select's option, the values of the ticked checkboxes).

        The bot gets the state Slack would send: every input of the modal, a chosen option as the view's full object.

        Raises:
            PageError: The modal is not open for ``user``, or ``values`` names an input or option it does not have.
        """
        with self.lock:
            if self._view_owners.get(view_id) != user or view_id in self._closed_views:
                raise PageError("that modal is not open for you")
            view = copy.deepcopy(self.workspace.views[view_id])
        if not isinstance(values, dict) or not all(isinstance(actions, dict) for actions in values.values()):
            raise PageError("values must map block ids to action ids to values")
        try:
            state = submitted_state(view, values)
        except ValueError as error:
            raise PageError(str(error)) from error
        payload = slack_requests.view_submission(
            callback_id=str(view.get("callback_id", "")),
            user_id=user,
            values=state,
            team=self.space,
            trigger_id=self._trigger(user),
            view=view,
        )
        answer = self._bot().post_action(payload)
        body = answer.json_object() or {}
        if answer.status == 200 and body.get("response_action") == "errors":
            return {"status": answer.status, "errors": body.get("errors") or {}}
        if answer.status == 200:
            self.close_view(user, view_id)
        return {"status": answer.status, "errors": {}}

    def open_home(self, user: str) -> JsonDict:
        """``user`` opens the app's Home tab: Slack sends ``app_home_opened`` (the bot publishes the view)."""
        view = self.home_view(user)
        event = slack_requests.app_home_opened(self.space, user=user, channel=self.dm_channel(user), view=view)
        return self._bot_answer(self._bot().post_event(event))

    def close_view(self, user: str, view_id: str) -> JsonDict:
        """``user`` closes the modal (no request: the bot's modals do not ask for ``view_closed``)."""
        with self.lock:
            if self._view_owners.get(view_id) == user:
                self._closed_views.add(view_id)
                self.changed()
        return {}

    def advance_clock(self, advance_ms: int) -> JsonDict:
        """Move the sandbox's virtual clock forward (``OffsetClock.advance``)."""
        if not 0 <= advance_ms <= _MAX_ADVANCE_MS:
            raise PageError("advance_ms must be between 0 and 30 days")
        offset = OffsetClock(self.redis).advance(advance_ms)
        with self.lock:
            self.changed()
        return {"clock": {"offset_ms": offset, "now_ms": int(time.time() * 1000) + offset}}

    # ------------------------------------------------------------------ helpers

    def _bot(self) -> SignedPoster:
        if self.bot is None:
            raise PageError("the bot is not connected yet")
        return self.bot

    def _trigger(self, user: str) -> str:
        trigger_id = slack_requests.new_trigger_id()
        with self.lock:
            self._trigger_users[trigger_id] = user
        return trigger_id

    @staticmethod
    def _bot_answer(answer: PostResult) -> JsonDict:
        if answer.status != 200:
            raise PageError(f"the bot answered HTTP {answer.status}: {answer.body[:200]}")
        return {"status": answer.status}


def _channel_name(channel: str) -> str:
    return CHANNEL_NAME if channel == CHANNEL else channel.lower()


def _person(args: dict[str, Any]) -> str:
    user = str(args.get("user", ""))
    if user not in {person.user_id for person in PEOPLE}:
        raise PageError(f"unknown sandbox user {user!r}")
    return user


def _find_action(blocks: list[JsonDict], action_id: str, value: str | None = None) -> tuple[str, JsonDict] | None:
    for block in blocks:
        elements = list(block.get("elements") or [])
        if block.get("accessory"):
            elements.append(block["accessory"])
        for element in elements:
            if not isinstance(element, dict) or element.get("action_id") != action_id:
                continue
            if value is None or element.get("value") == value:
                return str(block.get("block_id", "")), element
    return None


def _value_of(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _static(_method: str, raw_path: str, headers: dict[str, str], body: bytes) -> Reply:
    path = urlsplit(raw_path).path
    name = "index.html" if path == "/" else path.removeprefix("/static/")
    if name not in _STATIC_FILES:
        return Reply.text(404, "not found")
    content_type = (mimetypes.guess_type(name)[0] or "application/octet-stream") + "; charset=utf-8"
    content = (STATIC_DIR / name).read_bytes()
    return Reply(200, content, content_type=content_type, headers={"Cache-Control": "no-store"})


def _sandbox_time(clock: OffsetClock) -> Callable[[], str]:
    """Timestamps from the sandbox's clock (moved forward as the page asks), as Slack's are from its own.

    Strictly increasing: a reminder posted after "+1 h" is stamped an hour on, as the clock shows.
    """
    last = 0.0

    def next_ts() -> str:
        nonlocal last
        last = max(time.time() + clock.offset_ms() / 1000, last + 0.000001)
        return f"{last:.6f}"

    return next_ts
