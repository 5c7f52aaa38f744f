"""How the loopback Slack answers a request.

A Web API call (its token, its workspace, then its method, through ``LoopbackSlack.around_method``) or a POST to a
response URL, each recorded as a ``Call``; and ``oauth.v2.access``, which installs the app in a workspace or, org-wide,
in an Enterprise Grid org (``orgs``).
"""

import copy
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

from loopback_slack import chat, history, orgs, users, views
from loopback_slack.auth import Tokens, bearer_token, client_credentials
from loopback_slack.calls import RESPONSE_URL_METHOD, Answer, Call, Reply, SlackError
from loopback_slack.methods import AroundMethod, JsonDict, Method
from loopback_slack.orgs import InstallOffer, Org
from loopback_slack.parsing import parse_request_args
from loopback_slack.state import WorkspaceState
from loopback_slack.transport import Respond

RESPONSE_PATH: Final = "_response/"
"""Where response URLs live on the server (after its root)."""
KEPT_CALLS: Final = 100_000
"""How many of the latest calls are kept for ``LoopbackSlack.calls`` (tests and benches read far fewer)."""


class Dispatcher:
    """The answering side of ``LoopbackSlack``, which configures it and reads its ``calls`` under the same ``lock``.

    ``answer_call`` and ``answer_response_url`` take the lock; everything else is used with it held.
    """

    def __init__(
        self,
        lock: threading.Condition,
        changed: Callable[[], None],
        workspace: WorkspaceState,
        tokens: Tokens,
        around: AroundMethod,
        *,
        kept_calls: int = KEPT_CALLS,
    ) -> None:
        """Answer under ``lock`` from ``workspace`` and ``tokens``, each method's answer through ``around``.

        ``changed`` wakes whoever waits for a call.
        """
        self.lock = lock
        self._changed = changed
        self._around = around
        self._default = workspace
        self.tokens = tokens
        self.workspaces: dict[str, WorkspaceState] = {workspace.identity.team_id: workspace}
        self.token_teams: dict[str, str] = dict.fromkeys(tokens.bot, workspace.identity.team_id)
        self.orgs: dict[str, Org] = {}  # enterprise id -> org
        self.install_codes: dict[str, InstallOffer] = {}
        self.client_credentials: tuple[str, str] | None = None
        self.methods: dict[str, Method] = {**users.METHODS, **chat.METHODS, **views.METHODS, **history.METHODS}
        self.calls: deque[Call] = deque(maxlen=kept_calls)  # a sandbox runs for days: keep the latest
        self.routes: list[tuple[str, bool, Respond]] = []  # (prefix, exact, respond), served before the API

    def add_workspace(self, state: WorkspaceState, token: str) -> None:
        """Answer calls made with ``token`` from ``state``."""
        self.workspaces[state.identity.team_id] = state
        self.token_teams[token] = state.identity.team_id
        self.tokens.bot.add(token)

    def add_org(self, org: Org) -> None:
        """Answer calls made with ``org.token`` from the org's workspaces (added already)."""
        self.orgs[org.enterprise_id] = org
        self.tokens.bot.add(org.token)

    def token_of(self, team_id: str) -> str:
        """The bot token of ``team_id`` (or of an org's org-wide install, given its enterprise id)."""
        if team_id in self.orgs:
            return self.orgs[team_id].token
        return next(token for token, team in self.token_teams.items() if team == team_id)

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> Reply:
        """Answer one HTTP request: a route in ``routes``, a response URL, or a Web API call."""
        split = urlsplit(raw_path)
        with self.lock:
            routes = list(self.routes)
        for prefix, exact, respond in routes:
            if split.path == prefix or (not exact and split.path.startswith(prefix)):
                return respond(method, raw_path, headers, body)
        path = split.path.lstrip("/")
        if path.startswith(RESPONSE_PATH):
            return self.answer_response_url(path.removeprefix(RESPONSE_PATH), headers, body)
        return self.answer_call(path.removeprefix("api/"), split.query, headers, body)

    def answer_call(self, method: str, query: str, headers: dict[str, str], body: bytes) -> Reply:
        """Answer one Web API call and record it."""
        arrived = time.monotonic()
        with self.lock:
            try:
                args = parse_request_args(query, headers.get("content-type", ""), body)
            except (ValueError, UnicodeDecodeError):
                args = {"_raw": body}
                answer = Answer(200, {"ok": False, "error": "invalid_json"})
            else:
                answer = self._answer(method, args, headers)
            # Recorded with the state change under one lock hold: whoever waits for the call sees its effect.
            call = Call(method, copy.deepcopy(args), dict(headers), arrived, answer.status, copy.deepcopy(answer.data))
            self.calls.append(call)
            self._changed()
        return Reply.json(answer.status, answer.data, headers=answer.headers, delay=answer.delay)

    def _answer(self, method: str, args: JsonDict, headers: dict[str, str]) -> Answer:
        """The answer to one call; applies its effect (the lock is held)."""
        if method == "oauth.v2.access":
            return Answer(200, self._oauth_access(args, headers))
        refusal = self.tokens.refusal(method, headers, args)
        if refusal is not None:
            return Answer(200, {"ok": False, "error": refusal})
        token = bearer_token(headers, args)
        org = next((org for org in self.orgs.values() if org.token == token), None)
        if org is not None and method == "auth.test":
            return Answer(200, {"ok": True, **orgs.auth_test(org, self._default.identity.app_id)})
        if org is not None:
            state = orgs.workspace_for(org, self.workspaces, args)
        else:
            state = self.workspaces[self.token_teams.get(token, self._default.identity.team_id)]
        return self._around(method, args, lambda: self._run(method, state, args))

    def _run(self, method: str, state: WorkspaceState, args: JsonDict) -> Answer:
        """The method's own answer, from ``state`` (the lock is held)."""
        handler = self.methods.get(method)
        if handler is None:
            return Answer(404, {"ok": False, "error": "unknown_method"})
        try:
            return Answer(200, {"ok": True, **handler(state, args)})
        except SlackError as error:
            return Answer(200, {"ok": False, "error": error.error})

    def _oauth_access(self, args: JsonDict, headers: dict[str, str]) -> JsonDict:
        """``oauth.v2.access``: trade a one-time install code for a workspace's or org's token (lock held)."""
        if self.client_credentials is not None and client_credentials(headers, args) != self.client_credentials:
            return {"ok": False, "error": "invalid_client_id"}
        offered = self.install_codes.pop(str(args.get("code") or ""), None)
        if offered is None:
            return {"ok": False, "error": "invalid_code"}
        if offered.team_id is None:
            org_wide = self.orgs[str(offered.enterprise_id)]
            return orgs.org_wide_access(org_wide, app_id=self._default.identity.app_id, installer=offered.installer)
        identity = self.workspaces[offered.team_id].identity
        org = self.orgs.get(offered.enterprise_id or "")
        return {
            "ok": True,
            "access_token": self.token_of(offered.team_id),
            "token_type": "bot",
            "scope": "app_mentions:read,chat:write,commands",
            "bot_user_id": identity.bot_user_id,
            "app_id": identity.app_id,
            "team": {"id": offered.team_id, "name": identity.team},
            "enterprise": None if org is None else {"id": org.enterprise_id, "name": org.name},
            "is_enterprise_install": False,
            "authed_user": {"id": offered.installer},
        }

    def answer_response_url(self, key: str, headers: dict[str, str], body: bytes) -> Reply:
        """Answer a POST to the response URL ``key`` and record it."""
        arrived = time.monotonic()
        try:
            args = parse_request_args("", headers.get("content-type", "application/json"), body)
        except (ValueError, UnicodeDecodeError):
            args = {"_raw": body}
        with self.lock:
            target = self._default.response_urls.get(key)
            call = Call(RESPONSE_URL_METHOD, {**copy.deepcopy(args), "_key": key}, dict(headers), arrived, 200)
            if target is None:
                call = Call(call.method, call.args, call.headers, arrived, 404, {"ok": False, "error": "no_service"})
            else:
                chat.apply_response_url(self._default, target, args)
            self.calls.append(call)
            self._changed()
        if target is None:
            return Reply.text(404, "no_service")
        return Reply.text(200, "ok", content_type="text/html; charset=utf-8")
