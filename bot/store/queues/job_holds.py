"""Which jobs ``JobQueue`` has handed to each consumer, so that each is handed over once until it is let go.

By consumer (workers may share one queue): the entry ids of each shard handed over and not acknowledged, handed back,
taken over or let go yet (a handler that escaped); the shards whose last read may have lost its reply. And the jobs
acknowledged in the last ``ACKED_KEPT_S``: a reply read before the ack (a history read, a claim) may name the job
after the ack let go of it; acknowledged, it is deleted, its id never used again, so it is never handed over again.
Thread-safe.
"""

import logging
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from bot.store.queues.jobs import Job

logger = logging.getLogger(__name__)
ACKED_KEPT_S: Final = 60.0
"""How long an acknowledged job's id is kept: a reply read before the ack is handed over well within (a reply waits
for a socket timeout at most, seconds)."""


class JobHolds:
    """The jobs each consumer holds; the shards each may have lost a read's reply of; the jobs acknowledged lately."""

    def __init__(self) -> None:
        """Nothing held."""
        self._lock = threading.Lock()
        self._held: dict[str, dict[int, set[str]]] = {}
        self._unsure: dict[str, set[int]] = {}
        self._acked: dict[tuple[int, str], float] = {}  # in the order acknowledged: the oldest first

    def unsure(self, consumer: str, shards: Iterable[int]) -> list[int]:
        """Those of ``shards`` whose last read by ``consumer`` may have lost its reply."""
        with self._lock:
            return [shard for shard in shards if shard in self._unsure.get(consumer, ())]

    def mark_unsure(self, consumer: str, shards: Iterable[int]) -> None:
        """The read of ``shards`` by ``consumer`` may have lost its reply."""
        with self._lock:
            self._unsure.setdefault(consumer, set()).update(shards)

    def mark_sure(self, consumer: str, shards: Iterable[int]) -> None:
        """``consumer``'s history of ``shards`` was read (or is gone with its group)."""
        with self._lock:
            self._unsure.get(consumer, set()).difference_update(shards)

    def most_held(self, consumer: str, shards: Iterable[int]) -> int:
        """How many jobs ``consumer`` holds on the one of ``shards`` it holds most on."""
        with self._lock:
            held = self._held.get(consumer, {})
            return max((len(held.get(shard, ())) for shard in shards), default=0)

    def hand_over(self, consumer: str, jobs: "list[Job]") -> "list[Job]":
        """Those of ``jobs`` that ``consumer`` does not hold yet and that were not acknowledged lately, held now.

        The one place jobs are marked held: a job found twice (a late claim and a history read) is handed over once.
        """
        handed: list[Job] = []
        with self._lock:
            self._forget_old_acks()
            held = self._held.setdefault(consumer, {})
            for job in jobs:
                ids = held.setdefault(job.shard, set())
                if job.entry_id in ids or (job.shard, job.entry_id) in self._acked:
                    # Running here, waiting for its retry, or done: a second copy would run it again.
                    logger.info(
                        "job_id=<%s>, consumer=<%s> | held or done already: not handed again", job.job_id, consumer
                    )
                    continue
                ids.add(job.entry_id)
                handed.append(job)
        return handed

    def let_go(self, job: "Job", consumer: str | None = None, *, acked: bool = False) -> None:
        """``job`` is no longer held by ``consumer`` (by any consumer when ``None``); ``acked``: never hand it again."""
        with self._lock:
            holders = [self._held.get(consumer, {})] if consumer is not None else list(self._held.values())
            for held in holders:
                held.get(job.shard, set()).discard(job.entry_id)
            if acked:
                self._forget_old_acks()
                self._acked[(job.shard, job.entry_id)] = time.monotonic()

    def _forget_old_acks(self) -> None:
        oldest = time.monotonic() - ACKED_KEPT_S
        while self._acked:
            entry, acked_at = next(iter(self._acked.items()))
            if acked_at >= oldest:
                return
            del self._acked[entry]
