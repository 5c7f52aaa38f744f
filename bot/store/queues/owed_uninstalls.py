"""Uninstalls Slack was answered for and a worker still owes: recorded before the ack, carried out by a worker.

Ending a workspace's requests reads what waits there and may take longer than Slack's 3 seconds, so the listener
only records what is owed (one write) and acks; a worker takes it with a lease (``bot.store.queues.due``), and one that
dies meanwhile leaves it to the next when the lease runs out. Done twice, an uninstall changes nothing more: it
is kept until it completes.
"""

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Final

import redis

from bot.store import keys
from bot.store.queues.due import DueQueue

LEASE_S: Final = 60.0
"""How long a worker holds an uninstall it took before another may take it over."""
_SHARD: Final = 0  # few and rare: one queue, on shard 0


@dataclass(frozen=True)
class OwedUninstall:
    """One uninstall to carry out, as its listener was told it.

    Attributes:
        event: ``uninstalled`` (``app_uninstalled``, ``tokens_revoked``) or ``team_access_revoked``.
        team_id: The workspace (``uninstalled``; may be empty for an org-wide install).
        enterprise_id: The Grid org, if any.
        org_wide: The org-wide installation went (``uninstalled``).
        team_ids: The workspaces taken from the org (``team_access_revoked``).
    """

    event: str
    team_id: str = ""
    enterprise_id: str | None = None
    org_wide: bool = False
    team_ids: tuple[str, ...] = field(default=())

    def to_json(self) -> str:
        """Serialize for Redis."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "OwedUninstall":
        """Restore from Redis."""
        decoded = json.loads(text)
        return cls(**{**decoded, "team_ids": tuple(decoded.get("team_ids") or ())})


class OwedUninstalls:
    """The uninstalls workers owe (``keys.uninstalls_due``, ``keys.uninstalls_owed``)."""

    def __init__(self, client: redis.Redis, *, clock: Callable[[], float] = time.time) -> None:
        """``clock`` returns seconds."""
        self._client = client
        self._queue = DueQueue(
            client=client,
            due_key=keys.uninstalls_due(_SHARD),
            entries_key=keys.uninstalls_owed(_SHARD),
            clock=lambda: int(clock() * 1000),
            record_key=partial(keys.claim_record, _SHARD, "uninstalls"),
        )

    def owe(self, owed_id: str, owed: OwedUninstall) -> None:
        """Record ``owed`` under ``owed_id`` (its event's delivery), due at once."""
        pipeline = self._client.pipeline(transaction=True)
        self._queue.add(pipeline, owed_id, owed.to_json(), due_ms=self._queue.now_ms())
        pipeline.execute()

    def take(self, *, limit: int = 10, lease_s: float = LEASE_S) -> list[tuple[str, OwedUninstall]]:
        """Up to ``limit`` owed uninstalls, each held ``lease_s`` by the caller (an unreadable one is dropped)."""
        taken = []
        for owed_id, text in self._queue.claim(lease_s=lease_s, limit=limit):
            try:
                taken.append((owed_id, OwedUninstall.from_json(text)))
            except (ValueError, TypeError):
                self._queue.complete(owed_id)  # written by no version of this module: nothing to carry out
        return taken

    def done(self, owed_id: str) -> None:
        """Forget an uninstall carried out."""
        self._queue.complete(owed_id)

    def waiting(self) -> int:
        """How many are owed (taken or not)."""
        return self._queue.pending()
