"""The worker: runs agent jobs, delivers the outbox and fires the schedule, until told to stop.

Jobs: read new ones for this consumer; every few seconds also claim jobs that another worker
took and never acknowledged (it died). A job that keeps failing is given up after a few
deliveries: the thread is told, the audit trail records it, and the job is acknowledged so it
cannot block the queue. The outbox is delivered by a second thread that wakes as soon as an
entry is queued; a third fires due reminders, escalations and expiries.
"""

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

from bot import messages
from bot.audit import Audit
from bot.delivery import Deliverer
from bot.escalation import Escalator
from bot.jobs import Job, JobQueue
from bot.outbox import Outbox
from bot.runner import SessionRunner

logger = logging.getLogger(__name__)

MAX_DELIVERIES: Final = 5


@dataclass
class Worker:
    """One worker process's loops (run them in threads, or call the ``*_once`` methods in tests).

    Attributes:
        claim_idle_ms: How long a job may stay unacknowledged before another worker takes it.
    """

    queue: JobQueue
    runner: SessionRunner
    outbox: Outbox
    deliverer: Deliverer
    escalator: Escalator
    audit: Audit
    claim_idle_ms: int = 60_000
    audit_max_entries: int = 1_000_000
    audit_keep_unexported: bool = False
    trim_every_s: float = 60.0
    consumer: str = field(default_factory=lambda: f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}")
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _next_trim: float = field(default=0.0, repr=False)

    def run_jobs_once(self, *, block_ms: int = 1000) -> int:
        """Claim stale jobs, else read new ones; handle them; return how many were handled."""
        jobs = self.queue.claim_stale(self.consumer, min_idle_ms=self.claim_idle_ms)
        if not jobs:
            jobs = self.queue.read(self.consumer, block_ms=block_ms)
        for job in jobs:
            self._handle(job)
        return len(jobs)

    def deliver_once(self, *, wait_s: float = 1.0) -> int:
        """Deliver what is due; if nothing was, wait for new entries up to ``wait_s``."""
        handled = self.deliverer.deliver_due()
        if not handled:
            self.outbox.wait_for_work(wait_s)
        return handled

    def tick_once(self, *, idle_s: float = 1.0) -> int:
        """Fire due reminders, escalations and expiries (and trim the audit trail now and then).

        Sleeps ``idle_s`` when nothing was due.
        """
        fired = self.escalator.tick()
        if time.monotonic() >= self._next_trim:
            self._next_trim = time.monotonic() + self.trim_every_s
            self.audit.trim(max_entries=self.audit_max_entries, keep_unexported=self.audit_keep_unexported)
        if not fired:
            self._stop.wait(idle_s)
        return fired

    def run_forever(self) -> None:
        """All three loops, until ``stop()``."""
        self.queue.ensure_group()
        helpers = [
            threading.Thread(target=self._loop, args=(self.deliver_once,), name="outbox", daemon=True),
            threading.Thread(target=self._loop, args=(self.tick_once,), name="schedule", daemon=True),
        ]
        for thread in helpers:
            thread.start()
        self._loop(self.run_jobs_once)
        for thread in helpers:
            thread.join(timeout=5)

    def stop(self) -> None:
        """Ask both loops to finish their current step and return."""
        self._stop.set()

    def _loop(self, step: Callable[[], int]) -> None:
        while not self._stop.is_set():
            try:
                step()
            except Exception:
                logger.exception("worker=<%s> | step failed; continuing", self.consumer)
                time.sleep(1)

    @contextmanager
    def _heartbeat(self, job: Job) -> Iterator[None]:
        """Keep ``job`` claimed while it runs: a long model call or tool must not be taken over."""
        done = threading.Event()

        def beat() -> None:
            while not done.wait(self.claim_idle_ms / 3000):
                try:
                    self.queue.touch(job, self.consumer)
                except Exception:
                    logger.exception("job_id=<%s> | heartbeat failed", job.job_id)

        thread = threading.Thread(target=beat, name=f"heartbeat-{job.job_id}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join(timeout=5)

    def _handle(self, job: Job) -> None:
        try:
            with self._heartbeat(job):
                self.runner.handle(job)
        except Exception as error:
            summary = f"{type(error).__name__}: {error}"
            if job.deliveries >= MAX_DELIVERIES:
                self._give_up(job, summary)
                return
            logger.exception("job_id=<%s>, kind=<%s> | job failed; it will be retried", job.job_id, job.kind)
            if job.deliveries == 1:  # say so once, not on every retry
                self.runner.report_failure(job, messages.agent_retrying(summary))
            return
        self.queue.ack(job)

    def _give_up(self, job: Job, summary: str) -> None:
        logger.error("job_id=<%s> | failed %d times, giving up: %s", job.job_id, job.deliveries, summary)
        self.audit.record("job_abandoned", session_id=job.fields.get("session_id", ""), job=job.fields, error=summary)
        self.runner.report_failure(job, messages.agent_gave_up(summary, job.deliveries))
        self.queue.ack(job)
