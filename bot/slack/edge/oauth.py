"""OAuth mode: install the app in many workspaces, with Bolt's flow over our Redis.

The install page (``/slack/install``), its redirect (``/slack/oauth_redirect``), and the authorize step that finds each
request's token there.

Bolt's own authorize asks Slack's ``auth.test`` on every request; ours reads the installation (one Redis GET):
a click answers within Slack's 3 seconds without a Slack round trip before it.
"""

import logging
from typing import Final

from slack_bolt import BoltContext
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.authorize import Authorize
from slack_bolt.oauth.oauth_settings import OAuthSettings

from bot.settings import Settings
from bot.store.workspaces.installations import Installations
from bot.store.workspaces.oauth_states import OAuthStates

logger = logging.getLogger(__name__)

INSTALL_PATH: Final = "/slack/install"
REDIRECT_PATH: Final = "/slack/oauth_redirect"
BOT_SCOPES: Final = (
    "app_mentions:read",
    "chat:write",
    "commands",
    "channels:history",
    "groups:history",
    "im:history",
    "usergroups:read",
    "channels:read",
    "groups:read",
)
"""What the install asks for: the bot scopes of ``manifest.yml`` (a test keeps the two alike)."""


class InstalledAuthorize(Authorize):
    """The token of the installation serving the request's workspace (or its org), without asking Slack."""

    def __init__(self, installations: Installations) -> None:
        """Keep the installations (``Authorize.__init__`` sets nothing)."""
        self._installations = installations

    def __call__(
        self,
        *,
        context: BoltContext,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None,
        actor_enterprise_id: str | None = None,
        actor_team_id: str | None = None,
        actor_user_id: str | None = None,
    ) -> AuthorizeResult | None:
        """The request's authorization, or ``None`` when no installation serves its workspace."""
        del actor_enterprise_id, actor_team_id, actor_user_id
        found = self._installations.find_installation(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=context.is_enterprise_install
        )
        if found is None or not found.bot_token:
            logger.warning("team_id=<%s>, enterprise_id=<%s> | no installation: refused", team_id, enterprise_id)
            return None
        if found.is_enterprise_install and team_id:
            self._installations.remember_org(team_id, str(found.enterprise_id))
        return AuthorizeResult(
            enterprise_id=found.enterprise_id,
            team_id=team_id or found.team_id,
            team=found.team_name,
            bot_user_id=found.bot_user_id,
            bot_id=found.bot_id,
            bot_token=found.bot_token,
            bot_scopes=found.bot_scopes,
            user_id=user_id,
        )


def oauth_settings(settings: Settings, *, installations: Installations, states: OAuthStates) -> OAuthSettings:
    """Bolt's OAuth flow for ``settings`` (which must be OAuth mode's), keeping its records in Redis."""
    client_id, secret = settings.slack_client_id, settings.slack_client_secret
    if client_id is None or secret is None:
        raise ValueError("oauth_settings needs SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (load_settings checks both)")
    client_secret = secret.get_secret_value()
    return OAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        scopes=list(BOT_SCOPES),
        redirect_uri=settings.slack_redirect_uri,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        installation_store=installations,
        installation_store_bot_only=True,
        state_store=states,
        state_expiration_seconds=states.expiration_seconds,
        authorization_url=settings.slack_authorize_url,
    )
