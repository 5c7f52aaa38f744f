"""The bot in OAuth mode over real HTTP, installed through Bolt's flow in the workspaces (or orgs) of a loopback Slack.

``oauth_bot`` serves the bot for a ``FakeSlack`` set up with its workspaces; ``OAuthBot`` installs, asks and clicks
as Slack and its people do, each request carrying its workspace (and, for a workspace an org serves org-wide,
``org_of``, the org's ids as Slack sends them).
"""

import html
import re
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import redis
from pydantic import SecretStr

from bot.render import action_ids as ids
from bot.render import blocks
from bot.services import Services
from bot.settings import Settings
from bot.slack.edge.oauth import INSTALL_PATH, REDIRECT_PATH
from bot.worker import Worker
from loopback_slack import slack_requests
from loopback_slack.slack_requests import SignedPoster
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import SIGNING_SECRET, demo_factory, drain, served_bot
from tests.bot.support.people import APPROVER, REQUESTER

CLIENT_ID, CLIENT_SECRET = "111.222", "oauth-client-secret"
INSTALLATION_KEY = "q2S0lxBiN1n4o3VQ6Wm5s3JbQ0e8r0iE1Qy3dAq7R0k="
"""A Fernet key (``INSTALLATION_KEYS``): the tests seal tokens as a deployment does."""


@dataclass
class OAuthBot:
    """The bot in OAuth mode, the loopback Slack with its workspaces, and the handles a scenario needs.

    ``channels``: the channel asked in, per workspace; ``org_of``: the org that serves a workspace org-wide.
    """

    slack: FakeSlack
    services: Services
    poster: SignedPoster
    worker: Worker
    url: str
    channels: Mapping[str, str]
    org_of: dict[str, str] = field(default_factory=dict)

    def drain(self) -> None:
        drain(self.worker)

    def get(self, path: str, *, cookie: str | None = None) -> tuple[int, dict[str, str], str]:
        request = urllib.request.Request(self.url.rstrip("/") + path, headers={"Cookie": cookie} if cookie else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read().decode()

    def install(self, team: str | None = None, *, enterprise_id: str | None = None) -> int:
        """A person installs the app in ``team`` (or org-wide in ``enterprise_id``): the install page, Slack's
        approval, the redirect back."""
        status, headers, page = self.get(INSTALL_PATH)
        assert status == 200, page
        authorize_url = html.unescape(re.search(r'<a href="([^"]+)"', page).group(1))  # type: ignore[union-attr]
        query = parse_qs(urlsplit(authorize_url).query)
        assert query["client_id"] == [CLIENT_ID]
        assert set(query["scope"][0].split(",")) >= {"chat:write", "commands", "app_mentions:read"}
        state = query["state"][0]
        cookie = headers["set-cookie"].split(";")[0]
        code = f"code-{team or enterprise_id}"
        self.slack.offer_install(code, team, installer=REQUESTER, enterprise_id=enterprise_id)
        status, _headers, page = self.get(f"{REDIRECT_PATH}?code={code}&state={state}", cookie=cookie)
        return status

    def request_team(self, team_id: str) -> slack_requests.Team:
        """The ids of a request from ``team_id``: with its org when the org serves it org-wide."""
        org = self.org_of.get(team_id)
        return slack_requests.Team(team_id, enterprise_id=org, is_enterprise_install=org is not None)

    def mention(self, team: str, text: str = "restart checkout") -> int:
        """Someone in ``team`` mentions the bot; the HTTP status the bot answered."""
        channel = self.channels[team]
        event = slack_requests.app_mention(
            user=REQUESTER, channel=channel, text=f"<@U0BOT> {text}", team=self.request_team(team)
        )
        return self.poster.post_event(event).status

    def ask(self, team: str, text: str = "restart checkout") -> str:
        """Someone in ``team`` mentions the bot; the id of the approval it posted there."""
        before = set(self.approval_ids(team))
        assert self.mention(team, text) == 200
        self.drain()
        [approval_id] = set(self.approval_ids(team)) - before
        return approval_id

    def approval_ids(self, team: str) -> list[str]:
        return [
            str(block["block_id"]).removeprefix(blocks.ACTIONS_BLOCK_PREFIX)
            for message in self.slack.messages(self.channels[team], team=team)
            for block in message.get("blocks") or []
            if str(block.get("block_id", "")).startswith(blocks.ACTIONS_BLOCK_PREFIX)
        ]

    def approval_message(self, team: str, approval_id: str) -> dict[str, Any]:
        """The approval message of ``approval_id`` in ``team``, as Slack shows it now."""
        channel = self.channels[team]
        return next(m for m in self.slack.messages(channel, team=team) if approval_id in str(m["blocks"]))

    def click(self, team: str, approval_id: str, *, from_team: str | None = None) -> int:
        """``APPROVER`` clicks Approve on the approval message in ``team`` (sent as from ``from_team``, if given)."""
        message = self.approval_message(team, approval_id)
        channel = self.channels[team]
        payload = slack_requests.block_actions(
            action_id=ids.APPROVE_ACTION,
            user_id=APPROVER,
            channel_id=channel,
            message_ts=message["ts"],
            value=_button_value(message),
            blocks=message["blocks"],
            team=self.request_team(from_team or team),
            response_url=self.slack.response_url(channel=channel, message_ts=message["ts"]),
        )
        return self.poster.post_action(payload).status

    def tokens_used(self, method: str, channel: str) -> set[str]:
        return {
            call.headers.get("authorization", "").removeprefix("Bearer ")
            for call in self.slack.calls(method)
            if call.args.get("channel") == channel
        }


def _button_value(message: dict[str, Any]) -> str:
    for block in message["blocks"]:
        for element in block.get("elements") or []:
            if isinstance(element, dict) and element.get("action_id") == ids.APPROVE_ACTION:
                return str(element["value"])
    raise AssertionError("no Approve button")


@contextmanager
def oauth_bot(redis_client: redis.Redis, slack: FakeSlack, channels: Mapping[str, str]) -> Iterator[OAuthBot]:
    """The bot in OAuth mode for ``slack`` (started, with its workspaces), served over HTTP; nothing installed yet."""
    slack.client_credentials = (CLIENT_ID, CLIENT_SECRET)
    settings = Settings(
        slack_client_id=CLIENT_ID,
        slack_client_secret=SecretStr(CLIENT_SECRET),
        slack_signing_secret=SecretStr(SIGNING_SECRET),
        slack_api_url=slack.url,
        slack_authorize_url=f"{slack.url.removesuffix('api/')}oauth/v2/authorize",
        installation_keys=SecretStr(INSTALLATION_KEY),
        home_refresh_seconds=0,  # drain() shows every change at once (tests of the window set it)
    )
    assert settings.oauth
    services = Services(settings, redis_client=redis_client, agent_factory=demo_factory)
    # OAuth mode's own answer (403: a key naming no workspace) is checked against the document too.
    with closing(services), served_bot(settings, services, SignedPoster) as served:
        yield OAuthBot(slack, services, served.poster, served.worker, served.url, channels)
