"""``LoopbackSlack``: the Web API on a loopback port, put together from the API families, auth and the state.

Extension points (what the sandbox and the tests build on, instead of overriding internals):

- ``methods``: the Web API methods by name; add one, or wrap one (``methods[name] = wrapper(methods[name])``);
- ``around_method(method, args, answer)``: every method's answer passes through it; override it to answer otherwise
  (an HTTP error, ``ok: false``) or later (``Answer.delay``), as the tests' fault injection does;
- ``add_route(prefix, respond)``: serve other paths than ``/api/`` and response URLs on the same port;
- ``timestamps``: how new messages' ``ts`` are made (a counter by default, the same in every run);
- ``socket_mode_url()``: what ``apps.connections.open`` answers; override it to offer Socket Mode;
- ``lock``, ``changed()`` and ``workspace``: read or change the state as the methods do, under the lock;
- ``add_workspace`` and ``offer_install``: more workspaces, each with its own bot token and state (a call is
  answered from the workspace of its token), installed through ``oauth.v2.access``; ``add_org``: an Enterprise Grid
  org of some of them, installed org-wide with one token that speaks in each (``orgs``).

Its whole public surface (lifecycle, configuration, inspection) over one lock; requests are answered by ``dispatch``.
"""

import copy
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

from loopback_slack.auth import Tokens
from loopback_slack.calls import Answer, Call, SlackError
from loopback_slack.dispatch import KEPT_CALLS, RESPONSE_PATH, Dispatcher
from loopback_slack.methods import JsonDict, Method
from loopback_slack.orgs import InstallOffer, Org
from loopback_slack.state import Identity, WorkspaceState
from loopback_slack.transport import HttpServer, Respond
from loopback_slack.users import user_object


class LoopbackSlack:
    """A thread-safe, in-memory Slack Web API served on ``127.0.0.1:<random port>``.

    Use as a context manager (or ``start()`` / ``close()``). Configure users with ``add_user``, user groups with
    ``set_usergroup``, channel members with ``set_channel_members``; read state with ``calls``, ``messages``,
    ``message``, ``ephemerals``, ``views``.
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
        timestamps: Callable[[], str] | None = None,
        bind: tuple[str, int] = ("127.0.0.1", 0),
        kept_calls: int = KEPT_CALLS,
    ) -> None:
        """Set up the workspace: its identity, users, user groups and channel members; ``start`` listens.

        ``calls`` reads back the latest ``kept_calls`` calls (older ones are forgotten: a sandbox runs for days).
        """
        self.token = token
        self.app_token = app_token
        self.bind = bind  # where start() listens
        self.lock = threading.Condition(threading.RLock())
        identity = Identity(team_id=team_id, team=team, bot_user_id=bot_user_id, bot_id=bot_id, app_id=app_id)
        self.workspace = WorkspaceState(identity) if timestamps is None else WorkspaceState(identity, timestamps)
        self._dispatch = Dispatcher(
            self.lock, self.changed, self.workspace, Tokens(token, app_token), self.around_method, kept_calls=kept_calls
        )
        self.methods: dict[str, Method] = self._dispatch.methods
        self.methods["apps.connections.open"] = lambda _state, _args: {"url": self.socket_mode_url()}
        self.workspaces: dict[str, WorkspaceState] = self._dispatch.workspaces
        self._version = 0
        self._closing = threading.Event()
        self._server: HttpServer | None = None
        self._thread: threading.Thread | None = None
        self.add_user(bot_user_id, name="signoff", real_name="Signoff", is_bot=True, tz="America/Los_Angeles")
        for user_id, attributes in (users or {}).items():
            self.add_user(user_id, **attributes)
        for group_id, members in (usergroups or {}).items():
            self.set_usergroup(group_id, members)
        for channel_id, members in (channels or {}).items():
            self.set_channel_members(channel_id, members)

    @property
    def identity(self) -> Identity:
        """The first workspace's team and the app's bot, as its answers name them."""
        return self.workspace.identity

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        """Listen on ``bind`` in a daemon thread (once; a started fake stays as is)."""
        if self._server is None:
            self._closing.clear()
            self._server = HttpServer(self.bind, self._dispatch.handle, self._closing)
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="LoopbackSlack", daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening: wake the replies held back, shut the server down and join its thread."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        self._closing.set()  # wakes handlers holding a delayed answer back
        with self.lock:
            self.lock.notify_all()
        server.shutdown()
        server.server_close()
        server.drop_connections()
        if thread is not None:
            thread.join(timeout=5)

    @contextmanager
    def refusing(self) -> Iterator[None]:
        """Refuse every connection inside the block (kept-alive ones cut); then listen again on the same port.

        How Slack down looks from a client: the outage tests and ``bench.slack_outage`` use it.
        """
        host, port = self.bind[0], self.port
        self.close()
        try:
            yield
        finally:
            self.bind = (host, port)
            self.start()

    def __enter__(self) -> Self:
        """Start the fake (``start``)."""
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Stop the fake (``close``)."""
        self.close()

    @property
    def url(self) -> str:
        """The Web API base URL (ends in ``/``) for ``WebClient(base_url=...)``."""
        return f"http://127.0.0.1:{self.port}/api/"

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._server is None:
            raise RuntimeError("LoopbackSlack is not running; use it as a context manager or call start()")
        return int(self._server.server_port)

    @property
    def version(self) -> int:
        """A counter bumped by every state change (calls, seeded messages)."""
        with self.lock:
            return self._version

    def wait_for_change(self, since: int, timeout: float) -> int:
        """Block until ``version`` differs from ``since`` (or ``timeout`` passes, or the server closes); return it."""
        with self.lock:
            self.lock.wait_for(lambda: self._version != since or self._closing.is_set(), timeout=timeout)
            return self._version

    def changed(self) -> None:
        """Record a state change and wake waiters (call it with ``lock`` held)."""
        self._version += 1
        self.lock.notify_all()

    # ------------------------------------------------------------------ extension points

    def socket_mode_url(self) -> str:
        """The ``ws://`` URL ``apps.connections.open`` answers with; override to offer Socket Mode."""
        raise SlackError("not_allowed")

    def around_method(self, method: str, args: JsonDict, answer: Callable[[], Answer]) -> Answer:
        """Every Web API method's answer, with ``lock`` held: ``answer()``, the method's own; override to change it.

        An override may return another answer instead (without calling ``answer``: the call has no effect), or the
        method's with a ``delay`` (done on arrival, answered late: as when Slack did the work but the client timed
        out waiting).
        """
        return answer()

    def add_route(self, prefix: str, respond: Respond, *, exact: bool = False) -> None:
        """Serve requests whose path starts with ``prefix`` (or is it, if ``exact``) with ``respond``."""
        with self.lock:
            self._dispatch.routes.append((prefix, exact, respond))

    # ------------------------------------------------------------------ configuration

    @property
    def client_credentials(self) -> tuple[str, str] | None:
        """The app's OAuth client id and secret ``oauth.v2.access`` requires (``None``: any)."""
        return self._dispatch.client_credentials

    @client_credentials.setter
    def client_credentials(self, credentials: tuple[str, str] | None) -> None:
        with self.lock:
            self._dispatch.client_credentials = credentials

    def add_workspace(
        self,
        team_id: str,
        *,
        token: str,
        team: str | None = None,
        bot_user_id: str = "U0BOT",
        bot_id: str | None = None,
        users: Mapping[str, Mapping[str, Any]] | None = None,
        channels: Mapping[str, Sequence[str]] | None = None,
    ) -> WorkspaceState:
        """Another workspace the app can be installed in, answering calls made with ``token``."""
        identity = Identity(
            team_id=team_id,
            team=team or team_id,
            bot_user_id=bot_user_id,
            bot_id=bot_id or f"B{team_id}",
            app_id=self.identity.app_id,
        )
        state = WorkspaceState(identity)
        with self.lock:
            self._dispatch.add_workspace(state, token)
        self.add_user(bot_user_id, team=team_id, name="signoff", real_name="Signoff", is_bot=True)
        for user_id, attributes in (users or {}).items():
            self.add_user(user_id, team=team_id, **attributes)
        for channel_id, members in (channels or {}).items():
            self.set_channel_members(channel_id, members, team=team_id)
        return state

    def add_org(
        self,
        enterprise_id: str,
        *,
        token: str,
        workspaces: Sequence[str],
        name: str | None = None,
        bot_user_id: str = "U0BOT",
        bot_id: str | None = None,
    ) -> None:
        """An Enterprise Grid org of ``workspaces`` (added with ``add_workspace``); ``token``: its org-wide install's.

        A call made with ``token`` is answered from the org's workspace it names (``team_id``), or that knows its
        channel or user; ``auth.test`` with it names the org.
        """
        org = Org(
            enterprise_id, name or enterprise_id, token, tuple(workspaces), bot_user_id, bot_id or f"B{enterprise_id}"
        )
        with self.lock:
            self._dispatch.add_org(org)

    def offer_install(
        self, code: str, team_id: str | None = None, *, installer: str, enterprise_id: str | None = None
    ) -> None:
        """Let one ``oauth.v2.access`` with ``code`` install the app in ``team_id`` (by ``installer``).

        As Slack does after a person approves the install: the answer carries the workspace's bot token. With
        ``enterprise_id`` and no ``team_id``: an org-wide install of that org (``add_org``), answered with its token.
        """
        if team_id is None and enterprise_id is None:
            raise ValueError("offer_install needs a team_id, or an enterprise_id for an org-wide install")
        with self.lock:
            self._dispatch.install_codes[code] = InstallOffer(team_id, enterprise_id, installer)

    def token_of(self, team_id: str) -> str:
        """The bot token of ``team_id`` (or of the org-wide install of an org, given its enterprise id)."""
        with self.lock:
            return self._dispatch.token_of(team_id)

    def revoke_token(self, token: str) -> None:
        """Refuse a bot token from now on (``invalid_auth``), as Slack does once a token is revoked."""
        with self.lock:
            self._dispatch.tokens.bot.discard(token)

    def add_user(self, user_id: str, *, team: str | None = None, **attributes: Any) -> JsonDict:
        """Add (or replace) a user answered by ``users.info``; returns the user object.

        The user belongs to workspace ``team``, else the first.

        ``attributes``: ``name``, ``real_name``, ``display_name``, ``tz`` (default UTC), ``is_bot``, ``deleted``,
        ``email``, and any other field to put in the object as is.
        """
        with self.lock:
            state = self._state(team)
            user = user_object(state.identity, user_id, **attributes)
            state.users[user_id] = user
        return copy.deepcopy(user)

    def set_usergroup(self, group_id: str, members: Sequence[str], *, team: str | None = None) -> None:
        """Set the members ``usergroups.users.list`` answers for ``group_id`` (in workspace ``team``)."""
        with self.lock:
            self._state(team).usergroups[group_id] = list(members)

    def set_channel_members(self, channel_id: str, members: Sequence[str], *, team: str | None = None) -> None:
        """Set the members ``conversations.members`` answers for ``channel_id``.

        In workspace ``team``; unset: ``channel_not_found``.
        """
        with self.lock:
            self._state(team).channel_members[channel_id] = list(members)

    def _state(self, team: str | None) -> WorkspaceState:
        """The state of workspace ``team`` (the first one without it); call it with ``lock`` held."""
        return self.workspace if team is None else self.workspaces[team]

    def dm_channel(self, user_id: str) -> str:
        """The DM channel id ``conversations.open`` answers for ``user_id`` (posting to a user id lands there)."""
        return self.workspace.dm_channel(user_id)

    def response_url(self, channel: str | None = None, message_ts: str | None = None, user: str | None = None) -> str:
        """A URL on this fake to put in an interaction payload's ``response_url``.

        POSTs to it are recorded as ``method == "response_url"``; ``replace_original`` / ``delete_original`` apply to
        the message ``(channel, message_ts)`` when given, ``response_type: in_channel`` posts to ``channel``; other
        answers are ephemeral messages for ``user``.
        """
        with self.lock:
            key = f"R{self.workspace.new_id():06d}"
            self.workspace.response_urls[key] = (channel, message_ts, user)
        return f"{self.url.removesuffix('api/')}{RESPONSE_PATH}{key}"

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
        with self.lock:
            message: JsonDict = {
                "type": "message",
                "user": user,
                "text": text,
                "ts": ts or self.workspace.next_ts(),
                **extra,
            }
            if thread_ts is not None:
                message["thread_ts"] = thread_ts
            self.workspace.store_message(channel, message)
            self.changed()
            return copy.deepcopy(message)

    # ------------------------------------------------------------------ inspection

    def calls(self, method: str | None = None) -> list[Call]:
        """Every call received so far (of ``method``, if given), oldest first."""
        with self.lock:
            return [call for call in self._dispatch.calls if method is None or call.method == method]

    def clear_calls(self) -> None:
        """Forget the calls recorded so far."""
        with self.lock:
            self._dispatch.calls.clear()

    def messages(self, channel: str, thread_ts: str | None = None, *, team: str | None = None) -> list[JsonDict]:
        """Current state of the messages in ``channel`` (updates applied, deletions removed), oldest first.

        Without ``thread_ts``: every message in the channel, replies included. With it: the thread as
        ``conversations.replies`` returns it — the parent first, then the replies. ``team``: that workspace's.
        """
        with self.lock:
            return copy.deepcopy(self._state(team).channel_messages(channel, thread_ts))

    def message(self, channel: str, ts: str) -> JsonDict:
        """The current state of one message; ``KeyError`` if there is none."""
        with self.lock:
            return copy.deepcopy(self.workspace.render(channel, self.workspace.messages.get(channel, {})[ts]))

    def ephemerals(self, user: str | None = None) -> list[JsonDict]:
        """Ephemeral messages posted (to ``user``, if given), oldest first; each has channel, user, text, blocks."""
        with self.lock:
            return [copy.deepcopy(e) for e in self.workspace.ephemerals if user is None or e.get("user") == user]

    def views(self) -> list[JsonDict]:
        """Every view opened or published, in its current state, oldest first."""
        with self.lock:
            return copy.deepcopy(list(self.workspace.views.values()))

    def view(self, view_id: str) -> JsonDict:
        """A copy of the view ``view_id`` in its current state."""
        with self.lock:
            return copy.deepcopy(self.workspace.views[view_id])

    def home_view(self, user_id: str, *, team: str | None = None) -> JsonDict | None:
        """The App Home view published for ``user_id`` (in workspace ``team``), if any."""
        with self.lock:
            return copy.deepcopy(self._state(team).home_view(user_id))

    def __repr__(self) -> str:
        """Where the fake listens (or ``stopped``) and how many calls it recorded."""
        where = self.url if self._server is not None else "stopped"
        return f"<LoopbackSlack {where} calls={len(self._dispatch.calls)}>"
