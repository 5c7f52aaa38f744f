"""The ``private_metadata`` each modal the bot opened was opened with, under the view's ``external_id``.

Written before the view is opened, so it is there whenever Slack sends the submission; kept a day.
"""

import secrets
from typing import Final

import redis

from bot.store import keys
from state.text import as_text

_KEPT_S: Final = 24 * 3600


class ModalViews:
    """What each modal view was opened with, under a fresh random ``external_id``."""

    def __init__(self, client: redis.Redis) -> None:
        """Keep the client."""
        self._client = client

    def remember(self, metadata: str) -> str:
        """Record ``metadata`` for a view about to be opened; return the ``external_id`` to open it with."""
        external_id = secrets.token_urlsafe(18)
        self._client.set(keys.modal_view(external_id), metadata, ex=_KEPT_S)
        return external_id

    def opened_with(self, external_id: str) -> str | None:
        """The metadata the view ``external_id`` was opened with, or ``None`` (unknown, or forgotten)."""
        stored = self._client.get(keys.modal_view(external_id))
        return as_text(stored) if stored is not None else None
