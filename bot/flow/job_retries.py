"""``JobRetries``: a worker's own failed jobs, when each is tried again, and the one notice its thread is owed.

A failed job waits ``first_s``, then twice as long after each further failure, up to the cap the worker gives (under
half the claim time: the job stays the worker's, no other takes it meanwhile). Its thread is told once that the step
is delayed, as soon as the outbox can be written: during a Redis outage the notice is owed until the retry.
"""

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis

from bot.store.queues.jobs import Job

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Retry:
    """A failed job retried at ``due`` (monotonic seconds); ``counted``: the retry counts as a delivery."""

    job: Job
    due: float
    counted: bool


@dataclass
class JobRetries:
    """One worker's retry bookkeeping (its jobs run on several threads: what waits is kept under a lock).

    Attributes:
        first_s: How long a job waits before its first retry (doubling after each further failure).
    """

    first_s: float = 1.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _waiting: dict[str, Retry] = field(default_factory=dict, repr=False)
    _failures: dict[str, int] = field(default_factory=dict, repr=False)
    _owed: dict[str, str] = field(default_factory=dict, repr=False)
    _told: set[str] = field(default_factory=set, repr=False)

    def later(self, job: Job, *, counted: bool, cap_s: float) -> None:
        """Retry ``job`` after its backoff, at most ``cap_s`` from now."""
        failures = self._failures[job.job_id] = self._failures.get(job.job_id, 0) + 1
        delay_s = min(self.first_s * 2 ** (failures - 1), cap_s)
        with self._lock:
            self._waiting[job.job_id] = Retry(job, time.monotonic() + delay_s, counted)

    def due(self, *, limit: int, redeliver: Callable[[Retry], Job | None]) -> list[Job]:
        """Up to ``limit`` jobs whose retry is due, soonest first, each as ``redeliver`` hands it over again.

        A job ``redeliver`` finds taken over by another worker (or gone) is forgotten here.

        Raises:
            redis.RedisError: Redis went away before any job was handed over (the due ones stay due).
        """
        now = time.monotonic()
        with self._lock:
            due = sorted((each for each in self._waiting.values() if each.due <= now), key=lambda r: r.due)[:limit]
            for retry in due:
                del self._waiting[retry.job.job_id]
        jobs: list[Job] = []
        for index, retry in enumerate(due):
            try:
                again = redeliver(retry)
            except redis.RedisError:
                # The retries not handed over yet stay due (dropped here, a job would wait for the claim time, as if
                # this worker had died).
                with self._lock:
                    for left in due[index:]:
                        self._waiting.setdefault(left.job.job_id, left)
                if jobs:
                    return jobs
                raise
            if again is None:
                logger.info("job_id=<%s> | taken over by another worker or gone; not retried here", retry.job.job_id)
                self.forget(retry.job.job_id)
                continue
            jobs.append(again)
        return jobs

    def block_ms(self, block_ms: int) -> int:
        """How long a read of new jobs may block: ``block_ms``, or less when a retry falls due sooner."""
        with self._lock:
            if not self._waiting:
                return block_ms
            until_next = min(retry.due for retry in self._waiting.values()) - time.monotonic()
        return max(1, min(block_ms, int(until_next * 1000)))

    def running(self, job_id: str) -> None:
        """``job_id`` runs (again): it no longer waits for a retry."""
        with self._lock:
            self._waiting.pop(job_id, None)

    def take_waiting(self) -> list[Job]:
        """Every job still waiting for its retry, no longer waiting here (the worker hands them to the others)."""
        with self._lock:
            jobs = [retry.job for retry in self._waiting.values()]
            self._waiting.clear()
        return jobs

    def owed_notice(self, job_id: str) -> str | None:
        """The delay notice ``job_id``'s thread is still owed (it could not be sent when the step failed)."""
        return self._owed.get(job_id)

    def tell_delayed(
        self, job: Job, text: str, *, first_notice: Callable[[Job], bool], report: Callable[[Job, str], None]
    ) -> None:
        """Tell the job's thread once (``report``) that its step is delayed; when Redis is down, owe it until the retry.

        ``first_notice`` marks the notice as sent for every worker (a job taken over is not told twice).
        """
        if job.job_id in self._told:
            return
        try:
            # A notice owed here was marked (or the mark failed): only this worker can still send it.
            if first_notice(job) or job.job_id in self._owed:
                report(job, self._owed.get(job.job_id, text))
        except (redis.RedisError, KeyError):  # Redis unreachable, or no thread recorded for the session yet
            logger.warning("job_id=<%s> | could not tell the thread yet; will on the retry", job.job_id)
            self._owed.setdefault(job.job_id, text)
            return
        self._owed.pop(job.job_id, None)
        self._told.add(job.job_id)

    def forget(self, job_id: str) -> None:
        """``job_id`` is done with (acknowledged, given up, or someone else's now)."""
        with self._lock:
            self._waiting.pop(job_id, None)
        self._owed.pop(job_id, None)
        self._told.discard(job_id)
        self._failures.pop(job_id, None)
