"""Installations of the app, one per workspace (or per Enterprise Grid org), in Redis: Bolt's ``InstallationStore``.

Written by the OAuth flow (``/slack/oauth_redirect``), read for every request and every Slack call of OAuth mode,
deleted when the app is uninstalled or its tokens revoked. Each record is one key written alone (one SET, one
DEL), so it is safe on Redis Cluster. Only what the bot uses is kept: the bot token and ids, the installer,
the scopes; a user token is never asked for, so none is stored.
"""

import json
import logging
from datetime import datetime
from typing import Any

import redis
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore

from bot.store import keys
from state.text import as_text

logger = logging.getLogger(__name__)

_KEPT = (
    "app_id",
    "enterprise_id",
    "enterprise_name",
    "enterprise_url",
    "team_id",
    "team_name",
    "bot_token",
    "bot_id",
    "bot_user_id",
    "bot_scopes",
    "bot_refresh_token",
    "bot_token_expires_at",
    "user_id",
    "is_enterprise_install",
    "token_type",
    "installed_at",
)


class Installations(InstallationStore):
    """The app's installations (``keys.installation``), and which org serves a workspace (``keys.installation_org``)."""

    def __init__(self, redis_client: redis.Redis) -> None:
        """Keep the client."""
        self._redis = redis_client

    @property
    def logger(self) -> logging.Logger:
        """Bolt logs through it."""
        return logger

    def save(self, installation: Installation) -> None:
        """Keep ``installation``, replacing the workspace's (or org's) earlier one."""
        record = {name: _plain(getattr(installation, name)) for name in _KEPT}
        self._redis.set(self._key(installation.enterprise_id, installation.team_id, installation), json.dumps(record))
        logger.info("team_id=<%s>, enterprise_id=<%s> | installed", installation.team_id, installation.enterprise_id)

    def save_bot(self, bot: Bot) -> None:
        """Not used: ``save`` keeps the bot with its installation."""
        raise NotImplementedError("Installations.save keeps the bot with its installation")

    def find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        """The installation serving ``team_id`` (or the org, for an org-wide install).

        ``user_id`` is not used: one installation serves everyone in the workspace.
        """
        del user_id
        if is_enterprise_install or not team_id:
            return self._read(keys.installation(team_id=None, enterprise_id=enterprise_id, org_wide=True))
        found = self._read(keys.installation(team_id=team_id, enterprise_id=enterprise_id, org_wide=False))
        if found is None and enterprise_id:  # a workspace of an org that installed the app org-wide
            found = self._read(keys.installation(team_id=None, enterprise_id=enterprise_id, org_wide=True))
        return found

    def find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        """The bot of the installation serving ``team_id`` (or the org)."""
        found = self.find_installation(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=is_enterprise_install
        )
        return found.to_bot() if found is not None and found.bot_token else None

    def for_team(self, team_id: str) -> Installation | None:
        """The installation serving ``team_id``: its own, or its org's org-wide one (``remember_org``)."""
        found = self._read(keys.installation(team_id=team_id, enterprise_id=None, org_wide=False))
        if found is not None:
            return found
        enterprise_id = self._redis.get(keys.installation_org(team_id))
        if enterprise_id is None:
            return None
        org = keys.installation(team_id=None, enterprise_id=as_text(enterprise_id), org_wide=True)
        return self._read(org)

    def remember_org(self, team_id: str, enterprise_id: str) -> None:
        """Note that the org-wide installation of ``enterprise_id`` serves ``team_id`` (seen on its requests).

        So calls made outside a request (the outbox, the worker) find its token.
        """
        self._redis.set(keys.installation_org(team_id), enterprise_id)

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        """Forget the installation serving ``team_id`` (or the org, without a team): its bot token is gone."""
        self.delete_installation(enterprise_id=enterprise_id, team_id=team_id)

    def delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        """Forget the workspace's installation (the org's, without a team); ``user_id``: no user tokens are kept."""
        del user_id
        org_wide = not team_id
        self._redis.delete(keys.installation(team_id=team_id, enterprise_id=enterprise_id, org_wide=org_wide))
        if team_id:
            self._redis.delete(keys.installation_org(team_id))
        logger.info("team_id=<%s>, enterprise_id=<%s> | installation deleted", team_id, enterprise_id)

    def _key(self, enterprise_id: str | None, team_id: str | None, installation: Installation) -> str:
        org_wide = bool(installation.is_enterprise_install) or not team_id
        return keys.installation(team_id=team_id, enterprise_id=enterprise_id, org_wide=org_wide)

    def _read(self, key: str) -> Installation | None:
        raw = self._redis.get(key)
        if raw is None:
            return None
        try:
            record = json.loads(raw)
            return Installation(**{name: record.get(name) for name in _KEPT if record.get(name) is not None})
        except (ValueError, TypeError) as error:  # an unreadable record serves nobody: the workspace reinstalls
            logger.error("key=<%s> | installation unreadable, ignored: %s", key, error)
            return None


def _plain(value: Any) -> Any:
    """``value`` as JSON holds it (a time as its Unix timestamp)."""
    return value.timestamp() if isinstance(value, datetime) else value
