"""Installations of the app, one per workspace (or per Enterprise Grid org), in Redis: Bolt's ``InstallationStore``.

Written by the OAuth flow (``/slack/oauth_redirect``), read for every request and every Slack call of OAuth mode,
deleted when the app is uninstalled or its tokens revoked. Each record is one key written alone (one SET, one
DEL), so it is safe on Redis Cluster. Only what the bot uses is kept: the bot token and ids, the installer,
the scopes; a user token is never asked for, so none is stored. The bot token and its refresh token are sealed
(``bot.store.workspaces.token_seal``) when the store is given the keys, as OAuth mode always is (``INSTALLATION_KEYS``).
"""

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore

from bot.store import keys
from bot.store.workspaces.token_seal import TokenSeal, UnopenableSecret
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
_SECRETS = ("bot_token", "bot_refresh_token")
"""The fields sealed at rest."""


@dataclass(frozen=True)
class Resealed:
    """What ``Installations.reseal_all`` did: records sealed again, already current, none of the keys opened."""

    resealed: int
    current: int
    unopenable: int


class Installations(InstallationStore):
    """The app's installations (``keys.installation``), and which org serves a workspace (``keys.installation_org``)."""

    def __init__(self, redis_client: redis.Redis, *, seal: TokenSeal | None = None) -> None:
        """Keep the client; ``seal``: the tokens are sealed with it (``None``: kept as given, one workspace's tests)."""
        self._redis = redis_client
        self._seal = seal

    @property
    def logger(self) -> logging.Logger:
        """Bolt logs through it."""
        return logger

    def save(self, installation: Installation) -> None:
        """Keep ``installation``, replacing the workspace's (or org's) earlier one."""
        record = {name: _plain(getattr(installation, name)) for name in _KEPT}
        self._redis.set(
            self._key(installation.enterprise_id, installation.team_id, installation), json.dumps(self._sealed(record))
        )
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
        enterprise_id = self.org_serving(team_id)
        if enterprise_id is None:
            return None
        return self._read(keys.installation(team_id=None, enterprise_id=enterprise_id, org_wide=True))

    def remember_org(self, team_id: str, enterprise_id: str) -> None:
        """Note that the org-wide installation of ``enterprise_id`` serves ``team_id`` (seen on its requests).

        So calls made outside a request (the outbox, the worker) find its token.
        """
        self._redis.set(keys.installation_org(team_id), enterprise_id)
        self._redis.sadd(keys.installation_org_teams(enterprise_id), team_id)

    def note_org_teams(self) -> int:
        """Note each workspace an org serves in the org's list (``migrate --indexes``: notes made before it)."""
        noted = 0
        for key in list(self._redis.scan_iter(match=keys.installation_org("*"), count=1000)):
            enterprise_id = self._redis.get(key)
            if enterprise_id is not None:
                team_id = as_text(key).removeprefix(keys.installation_org(""))
                noted += self._redis.sadd(keys.installation_org_teams(as_text(enterprise_id)), team_id)
        return noted

    def org_teams(self, enterprise_id: str) -> set[str]:
        """The workspaces noted as served by the org-wide installation of ``enterprise_id`` (a superset: checked)."""
        return {as_text(team) for team in self._redis.smembers(keys.installation_org_teams(enterprise_id))}

    def org_serving(self, team_id: str) -> str | None:
        """The org whose org-wide installation serves ``team_id`` (``remember_org``), or ``None``."""
        enterprise_id = self._redis.get(keys.installation_org(team_id))
        return None if enterprise_id is None else as_text(enterprise_id)

    def delete_org(self, enterprise_id: str, *, teams: Iterable[str]) -> None:
        """Forget the org-wide installation of ``enterprise_id``, and which of ``teams`` it served."""
        self._redis.delete(keys.installation(team_id=None, enterprise_id=enterprise_id, org_wide=True))
        self.forget_org_of(enterprise_id, teams=teams)
        logger.info("enterprise_id=<%s> | org-wide installation deleted", enterprise_id)

    def forget_org_of(self, enterprise_id: str, *, teams: Iterable[str]) -> None:
        """Forget that the org-wide installation of ``enterprise_id`` serves each of ``teams`` (``remember_org``).

        A team another org serves keeps its note.
        """
        for team_id in teams:
            if self.org_serving(team_id) == enterprise_id:
                self._redis.delete(keys.installation_org(team_id))
            self._redis.srem(keys.installation_org_teams(enterprise_id), team_id)

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

    def reseal_all(self) -> Resealed:
        """Seal every installation's tokens with the first key (``python -m bot installations rotate``).

        Records written before sealing are sealed; one that no key opens is left as it is (and counted). A record
        the OAuth flow rewrites meanwhile keeps the new one (written sealed already).
        """
        if self._seal is None:
            raise ValueError("no keys to seal with")
        resealed = current = unopenable = 0
        for raw_key in self._redis.scan_iter(match=keys.installation(team_id="*", enterprise_id=None, org_wide=False)):
            key = as_text(raw_key)
            with self._redis.pipeline(transaction=True) as pipeline:
                try:
                    pipeline.watch(key)  # type: ignore[no-untyped-call]
                    raw = pipeline.get(key)
                    if raw is None:
                        continue
                    record = json.loads(raw)
                    stored = [record[name] for name in _SECRETS if isinstance(record.get(name), str)]
                    if all(self._seal.sealed_with_first(value) for value in stored):
                        current += 1
                        continue
                    opened = self._opened(record)
                    pipeline.multi()
                    pipeline.set(key, json.dumps(self._sealed(opened)), keepttl=True)
                    pipeline.execute()
                    resealed += 1
                except UnopenableSecret:
                    logger.error("key=<%s> | installation sealed with a key INSTALLATION_KEYS lacks: left as is", key)
                    unopenable += 1
                except redis.WatchError:
                    current += 1  # rewritten meanwhile by an install: sealed with the first key already
                except (ValueError, TypeError) as error:
                    logger.error("key=<%s> | installation unreadable, left as is: %s", key, type(error).__name__)
                    unopenable += 1
        return Resealed(resealed=resealed, current=current, unopenable=unopenable)

    def _sealed(self, record: dict[str, Any]) -> dict[str, Any]:
        return record if self._seal is None else _secrets_through(self._seal.seal, record)

    def _opened(self, record: dict[str, Any]) -> dict[str, Any]:
        return record if self._seal is None else _secrets_through(self._seal.open, record)

    def _read(self, key: str) -> Installation | None:
        raw = self._redis.get(key)
        if raw is None:
            return None
        try:
            record = self._opened(json.loads(raw))
            kept: dict[str, Any] = {name: record[name] for name in _KEPT if record.get(name) is not None}
            return Installation(**kept)
        except UnopenableSecret:  # never the value: a token, even sealed, stays out of the logs
            logger.error("key=<%s> | installation sealed with a key INSTALLATION_KEYS lacks: it serves nobody", key)
            return None
        except (ValueError, TypeError) as error:  # an unreadable record serves nobody: the workspace reinstalls
            logger.error("key=<%s> | installation unreadable, ignored: %s", key, type(error).__name__)
            return None


def _secrets_through(change: Callable[[str], str], record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with each secret field's text passed through ``change`` (sealed, or opened)."""
    return {
        name: change(value) if name in _SECRETS and isinstance(value, str) else value for name, value in record.items()
    }


def _plain(value: Any) -> Any:
    """``value`` as JSON holds it (a time as its Unix timestamp)."""
    return value.timestamp() if isinstance(value, datetime) else value
