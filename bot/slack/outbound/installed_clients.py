"""OAuth mode's ``SlackClients``: each workspace's client carries the bot token of its installation.

Tokens are read from the installations in Redis (``bot.store.workspaces.installations``) and kept for a short while,
so a delivery burst to one workspace reads its installation once; an uninstall is seen within
``kept_s`` (and Slack refuses a revoked token at once anyway).
"""

import threading
import time
from collections import OrderedDict
from typing import Final

from slack_sdk import WebClient

from bot.domain.workspaces import NotInstalled
from bot.slack.outbound.metered_client import MeteredWebClient
from bot.store.workspaces.installations import Installations

_KEPT_S: Final = 30.0
_TEAMS_KEPT: Final = 256  # clients kept at once; the least recently used goes first


class InstalledClients:
    """The client of each workspace the app is installed in (a client per token, like ``template``)."""

    def __init__(self, installations: Installations, *, template: WebClient, kept_s: float = _KEPT_S) -> None:
        """Keep the installations; new clients copy ``template``'s base URL, timeout and retry handlers."""
        self._installations = installations
        self._template = template
        self._kept_s = kept_s
        self._clients: OrderedDict[str, tuple[float, WebClient]] = OrderedDict()
        self._lock = threading.Lock()

    def for_team(self, team_id: str) -> WebClient:
        """The client of ``team_id``'s installation.

        Raises:
            NotInstalled: The app is not installed in ``team_id`` (or ``team_id`` is empty).
        """
        now = time.monotonic()
        with self._lock:
            kept = self._clients.get(team_id)
            if kept is not None and now - kept[0] < self._kept_s:
                self._clients.move_to_end(team_id)
                return kept[1]
        installation = self._installations.for_team(team_id) if team_id else None
        if installation is None or not installation.bot_token:
            self.forget(team_id)
            raise NotInstalled(team_id)
        client = self._client_with(installation.bot_token, kept)
        with self._lock:
            self._clients[team_id] = (now, client)
            self._clients.move_to_end(team_id)
            while len(self._clients) > _TEAMS_KEPT:
                self._clients.popitem(last=False)
        return client

    def forget(self, team_id: str) -> None:
        """Drop the client kept for ``team_id`` (its installation was deleted)."""
        with self._lock:
            self._clients.pop(team_id, None)

    def _client_with(self, token: str, kept: tuple[float, WebClient] | None) -> WebClient:
        if kept is not None and kept[1].token == token:
            return kept[1]  # the same token: keep its open connections
        template = self._template
        return MeteredWebClient(
            token=token, base_url=template.base_url, timeout=template.timeout, retry_handlers=template.retry_handlers
        )
