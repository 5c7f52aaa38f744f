"""The worker: runs agent jobs, delivers the outbox and fires the schedule, until told to stop.

Its job loop reads as phases (``start_jobs``, then ``_handle_job`` on the pool's threads):

1. Read jobs: own failed jobs whose retry is due first (``bot.flow.job_retries``); else jobs that another worker took
   and never acknowledged (it died), claimed once they are stale, such dead workers then removed from the group
   (looked for every quarter of the claim time, not before every read); else new ones for this consumer.
2. Run each: up to ``concurrency`` jobs at once on threads (``WORKER_CONCURRENCY``), never two of one session (see
   ``bot.flow.job_pool``); one heartbeat keeps every held job claimed while it runs.
3. Acknowledge it, or retry it: a failed job is retried by the same worker after a backoff, its thread told once
   that the step is delayed. A job that keeps failing is given up after a few deliveries: the thread is told, the
   audit trail records it, and the job is acknowledged so it cannot block the queue; a step that failed only because
   Redis was unreachable does not count toward that. Not retried at all: an error in the agent's own code on its
   responses (``AgentCodeError``: it would fail the same way until someone fixes the agent); a factory or agent that
   cannot be built or run as written (``AgentSetupError``: a type error, a missing method); a value the agent
   produced that no record can hold (``UnstorableValueError``: NaN, an object). A job that can never run
   (``Job.problem``: not UTF-8, a field missing) is quarantined: logged with its id, recorded in the audit trail as
   ``quarantined`` and acknowledged.
4. Housekeeping, beside the job loop: the outbox is delivered by a second thread that wakes as soon as an entry is
   queued; a third fires due reminders, escalations and expiries, carries out owed uninstalls and revokes, and trims the
   audit trail now and then; a fourth records the worker's heartbeat (``bot.store.queues.worker_heartbeats``) while
   each of the other three keeps stepping, so a hung loop shows as a dead worker to ``python -m bot worker-health``.
   A worker stopped cleanly hands its waiting retries to the others and leaves the group.
"""

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import redis
from opentelemetry.trace import SpanKind

from bot.domain.records import session_id_for
from bot.flow.escalation import Escalator
from bot.flow.job_pool import JobPool
from bot.flow.job_retries import JobRetries, Retry
from bot.flow.runner import AgentCodeError, AgentSetupError, SessionRunner
from bot.flow.uninstalls import Uninstalls
from bot.observe import metrics, tracing
from bot.observe.logs import log_context
from bot.render.texts import thread_posts
from bot.slack.outbound.delivery import Deliverer
from bot.store.access.grants import GrantStore
from bot.store.audit import Audit
from bot.store.queues.jobs import Job, JobKind, JobQueue
from bot.store.queues.worker_heartbeats import WorkerHeartbeats
from state import UnstorableValueError

logger = logging.getLogger(__name__)

MAX_DELIVERIES: Final = 5
STALL_S: Final = 120.0
"""A loop that has not finished a step for this long is hung: the worker stops beating (a step is bounded in time:
a blocking read waits a second, a delivery or a tick handles a bounded batch)."""
_MIN_BEAT_S: Final = 0.01


@dataclass
class Worker:
    """One worker process's loops (run them in threads, or call the ``*_once`` methods in tests).

    Attributes:
        jobs: The queue it reads, acknowledges and hands back jobs on.
        audit: Where a job given up or quarantined is recorded; trimmed now and then.
        build_indexes: Run once before the loops (``bot.store.approvals.index_build.ensure``: an upgrade lists
            the records stored before the indexes, once per Redis, one read after).
        claim_idle_ms: How long a job may stay unacknowledged before another worker takes it.
        retries: This worker's own failed jobs and when each is retried (``retries.first_s``: the first wait).
        concurrency: How many jobs run at once (threads); never two of one session.
    """

    jobs: JobQueue
    audit: Audit
    runner: SessionRunner
    deliverer: Deliverer
    escalator: Escalator
    build_indexes: Callable[[], object]
    uninstalls: Uninstalls | None = None
    grants: GrantStore | None = None
    claim_idle_ms: int = 30_000
    retries: JobRetries = field(default_factory=JobRetries)
    audit_max_entries: int = 1_000_000
    audit_keep_unexported: bool = False
    trim_every_s: float = 60.0
    concurrency: int = 1
    heartbeats: WorkerHeartbeats | None = None
    stall_s: float = STALL_S
    consumer: str = field(default_factory=lambda: f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}")
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _pool: JobPool | None = field(default=None, repr=False)
    _next: dict[str, float] = field(default_factory=dict, repr=False)
    """When each periodic chore (``claim``, ``prune``, ``trim``) is next due (monotonic seconds)."""
    _stepped: dict[str, float] = field(default_factory=dict, repr=False)
    """When each loop of ``run_forever`` last finished a step."""

    def run_forever(self) -> None:
        """Every loop (jobs, outbox, schedule, and the heartbeat when set), until ``stop()``.

        First, once per Redis, the indexes are built from records stored before them
        (``bot.store.approvals.index_build``).
        Once stopped, hand back waiting retries and leave the group.
        """
        self.jobs.ensure_group()
        self.build_indexes()
        now = time.monotonic()
        self._stepped.update({"jobs": now, "outbox": now, "schedule": now})
        helpers = [
            threading.Thread(target=self._loop, args=(self.deliver_once, "outbox"), name="outbox", daemon=True),
            threading.Thread(target=self._loop, args=(self.tick_once, "schedule"), name="schedule", daemon=True),
        ]
        if self.heartbeats is not None:
            helpers.append(threading.Thread(target=self._beat_until_stopped, name="heartbeat", daemon=True))
        for thread in helpers:
            thread.start()
        self._loop(self._start_jobs_when_free, "jobs")
        # Jobs still running finish (their claim kept fresh) before the worker leaves the group.
        self.pool.wait_idle(timeout_s=self.claim_idle_ms / 1000)
        for thread in helpers:
            thread.join(timeout=5)
        self.deliverer.close()
        self.leave()

    def stop(self) -> None:
        """Ask both loops to finish their current step and return."""
        self._stop.set()

    def run_jobs_once(self, *, block_ms: int = 1000) -> int:
        """Take jobs as ``start_jobs`` does and wait until they are done; return how many were taken."""
        taken = self.start_jobs(block_ms=block_ms)
        self.pool.wait_idle()
        return taken

    # Phase 1: read jobs.

    def start_jobs(self, *, block_ms: int = 1000) -> int:
        """Hand jobs to the pool, as many as it has room for; return how many.

        Own failed jobs whose retry is due come first, else stale jobs of dead workers (when it is time
        to look), else new ones (blocking up to ``block_ms``).
        """
        free = self.pool.free()
        if free == 0:
            return 0
        jobs = self.retries.due(limit=free, redeliver=self._redeliver)
        # A job looks abandoned only after the claim time: looking four times per claim time is enough.
        if not jobs and self._time_for("claim", every_s=self.claim_idle_ms / 4000):
            jobs = self.jobs.claim_stale(self.consumer, min_idle_ms=self.claim_idle_ms, count=free)
            self._prune_consumers()
        if not jobs:
            jobs = self.jobs.read(self.consumer, block_ms=self.retries.block_ms(block_ms), count=free)
        for job in jobs:
            self.pool.submit(job)
        return len(jobs)

    @property
    def pool(self) -> JobPool:
        """The threads this worker's jobs run on (created on first use)."""
        if self._pool is None:
            self._pool = JobPool(
                size=self.concurrency,
                handle=self._handle,
                session_of=_session_key,
                touch=lambda jobs: self.jobs.touch(jobs, self.consumer),
                escaped=lambda job: self.jobs.let_go(job, self.consumer),
                # A third of the claim time (never a busy loop, even with a claim time of 0).
                beat_every_s=max(self.claim_idle_ms / 3000, _MIN_BEAT_S),
            )
        return self._pool

    def _start_jobs_when_free(self) -> int:
        if self.pool.wait_for_free(timeout_s=1.0) == 0:
            return 0
        return self.start_jobs()

    def _redeliver(self, retry: Retry) -> Job | None:
        return self.jobs.redeliver(retry.job, self.consumer, count=retry.counted)

    # Phase 2: run each job (on the pool's threads).

    def _handle(self, job: Job) -> None:
        session = _session_key(job)
        session_id = None if session.startswith("job:") else session
        kind = tracing.name_part(job.kind, JobKind)  # stored data: never a span's name as it is
        attributes: tracing.Attributes = {"signoff.job.kind": kind, "signoff.job.deliveries": job.deliveries}
        with (
            log_context(job_id=job.job_id, job_kind=job.kind, session_id=session_id),
            tracing.span(
                f"job {kind}",
                parent=job.traceparent,
                kind=SpanKind.CONSUMER,
                attributes=attributes,
            ) as span,
        ):
            started = time.monotonic()
            outcome = self._handle_job(job)
            took_s = time.monotonic() - started
            span.set_attribute("signoff.job.outcome", outcome)
            if outcome != "done":  # the exception, when there was one, is recorded on it already
                tracing.failed(span, outcome)
            metrics.job_handled(kind=job.kind, outcome=outcome, took_s=took_s)
            logger.info("job_id=<%s>, kind=<%s> | %s in %.3f s", job.job_id, job.kind, outcome, took_s)

    def _handle_job(self, job: Job) -> str:
        """Run ``job``; return what became of it (``done``, ``retry``, ``abandoned``, ``failed``, ``quarantined``)."""
        self.retries.running(job.job_id)
        problem = job.problem()
        if problem is not None:
            logger.error("job_id=<%s>, kind=<%s> | malformed job quarantined: %s", job.job_id, job.kind, problem)
            fields = {"record": "job", "key": job.job_id, "job": job.fields, "why": problem}
            return self._end(job, "quarantined", None, "quarantined", **fields)
        owed = self.retries.owed_notice(job.job_id)
        if owed is not None:
            self._tell_delayed(job, owed)
        try:
            self.runner.handle(job)
        except (AgentCodeError, AgentSetupError, UnstorableValueError) as error:
            return self._not_retried(job, error)
        except Exception as error:  # boundary: the agent's code may raise anything; the job is retried
            return self._retry_or_give_up(job, error)
        self.jobs.ack(job)
        self.retries.forget(job.job_id)
        return "done"

    # Phase 3: acknowledge the job, or retry it.

    def _retry_or_give_up(self, job: Job, error: Exception) -> str:
        summary = f"{type(error).__name__}: {error}"
        tracing.current_failed(summary, error)
        outage = isinstance(error, redis.ConnectionError | redis.TimeoutError)
        if job.deliveries >= MAX_DELIVERIES and not outage:
            logger.error("job_id=<%s> | failed %d times, giving up: %s", job.job_id, job.deliveries, summary)
            text = thread_posts.agent_gave_up(summary, job.deliveries)
            return self._end(job, "abandoned", text, "job_abandoned", job=job.fields, error=summary)
        logger.error("job_id=<%s>, kind=<%s> | job failed; it will be retried", job.job_id, job.kind, exc_info=error)
        # Under half the claim time: the job stays ours, no other worker takes it meanwhile.
        self.retries.later(job, counted=not outage, cap_s=self.claim_idle_ms / 2000)
        self._tell_delayed(job, thread_posts.redis_unreachable() if outage else thread_posts.agent_retrying(summary))
        return "retry"

    def _not_retried(self, job: Job, error: AgentCodeError | AgentSetupError | UnstorableValueError) -> str:
        """A failure every run would hit again: the thread is told at once, and the job acknowledged.

        After an ``AgentCodeError`` the round stays decided, so a later mention or ``python -m bot resume`` runs the
        resume again once the agent is fixed.
        """
        if isinstance(error, AgentCodeError):
            tracing.current_failed("the agent's code failed", error)
            logger.error("job_id=<%s> | the agent's code failed on its responses, not retried: %s", job.job_id, error)
            event, text = "job_failed_in_agent_code", thread_posts.agent_code_failed(str(error), error.shapes)
        elif isinstance(error, AgentSetupError):
            tracing.current_failed("the agent cannot be built or run", error)
            logger.error(
                "job_id=<%s>, kind=<%s> | the agent cannot be built or run (fix AGENT_FACTORY's code), not retried: %s",
                job.job_id,
                job.kind,
                error,
            )
            event, text = "job_failed_agent_setup", thread_posts.agent_setup_failed(str(error))
        else:
            tracing.current_failed("the agent gave a value that cannot be stored", error)
            logger.error(
                "job_id=<%s> | the agent produced a value that cannot be stored, not retried: %s", job.job_id, error
            )
            event, text = "job_failed_unstorable", thread_posts.agent_value_unstorable(str(error))
        return self._end(job, "failed", text, event, job=job.fields, error=str(error))

    def _end(self, job: Job, outcome: str, text: str | None, event: str, /, **audited: Any) -> str:
        """Acknowledge ``job``, never run again: the audit trail records ``event``, its thread is told ``text``."""
        self.audit.record(event, session_id=job.fields.get("session_id", ""), **audited)
        if text is not None:
            self.runner.report_failure(job, text)
        self.jobs.ack(job)
        self.retries.forget(job.job_id)
        return outcome

    def _tell_delayed(self, job: Job, text: str) -> None:
        self.retries.tell_delayed(job, text, first_notice=self.jobs.first_notice, report=self.runner.report_failure)

    # Phase 4: housekeeping, on the other loops.

    def deliver_once(self, *, wait_s: float = 1.0) -> int:
        """Deliver what is due; if nothing was, wait for new entries up to ``wait_s``."""
        handled = self.deliverer.deliver_due()
        if not handled:
            self.deliverer.wait_for_work(wait_s)
        return handled

    def tick_once(self, *, idle_s: float = 1.0) -> int:
        """Fire due reminders, escalations and expiries, carry out owed uninstalls and revokes; trim the audit at times.

        Sleeps ``idle_s`` when nothing was due.
        """
        fired = self.escalator.tick() + self.finish_uninstalls() + self.finish_revokes()
        if self._time_for("trim", every_s=self.trim_every_s):
            self.audit.trim(max_entries=self.audit_max_entries, keep_unexported=self.audit_keep_unexported)
        if not fired:
            self._stop.wait(idle_s)
        return fired

    def finish_uninstalls(self) -> int:
        """Carry out the uninstalls Slack was answered for (``Uninstalls.carry_out_owed``); return how many."""
        return 0 if self.uninstalls is None else self.uninstalls.carry_out_owed()

    def finish_revokes(self) -> int:
        """Finish the revokes of standing approvals left owed (``GrantStore.finish_owed``); return how many."""
        return 0 if self.grants is None else self.grants.finish_owed()

    def stalled_loops(self) -> list[str]:
        """The loops of ``run_forever`` that have not finished a step within ``stall_s``."""
        now = time.monotonic()
        return sorted(name for name, stepped in self._stepped.items() if now - stepped > self.stall_s)

    def beat_once(self) -> bool:
        """Record this worker's heartbeat unless one of its loops is hung; return whether it beat."""
        stalled = self.stalled_loops()
        if stalled:
            logger.error("worker=<%s>, loops=<%s> | hung: no heartbeat", self.consumer, ",".join(stalled))
            return False
        if self.heartbeats is not None:
            self.heartbeats.beat(self.consumer)
        return True

    def leave(self) -> None:
        """Hand the jobs waiting for a retry to the other workers, then leave the group if nothing is held."""
        try:
            if self.heartbeats is not None:
                self.heartbeats.forget(self.consumer)
            for job in self.retries.take_waiting():
                self.jobs.hand_back(job, self.consumer, idle_ms=self.claim_idle_ms)
            self.jobs.leave(self.consumer)
        except redis.RedisError:
            logger.warning("worker=<%s> | could not leave the group; another worker prunes it", self.consumer)

    def _prune_consumers(self) -> None:
        if not self._time_for("prune", every_s=self.claim_idle_ms / 1000):
            return
        removed = self.jobs.prune_consumers(keep=self.consumer, idle_ms=self.claim_idle_ms)
        if removed:
            logger.info("worker=<%s> | removed %d dead consumers from the group", self.consumer, removed)

    def _time_for(self, chore: str, *, every_s: float) -> bool:
        """Whether ``chore`` is due; if it is, it is next due ``every_s`` from now."""
        now = time.monotonic()
        if now < self._next.get(chore, 0.0):
            return False
        self._next[chore] = now + every_s
        return True

    def _loop(self, step: Callable[[], int], name: str) -> None:
        while not self._stop.is_set():
            try:
                step()
            except Exception:  # boundary: the worker's loops outlive any bug in one step
                logger.exception("worker=<%s> | step failed; continuing", self.consumer)
                time.sleep(1)
            # A failing step still counts: the loop is alive (a Redis outage is readiness, not liveness).
            self._stepped[name] = time.monotonic()

    def _beat_until_stopped(self) -> None:
        assert self.heartbeats is not None  # started only with heartbeats
        while not self._stop.is_set():
            try:
                self.beat_once()
            except redis.RedisError as error:
                logger.warning("worker=<%s> | heartbeat not recorded: %s", self.consumer, error)
            self._stop.wait(self.heartbeats.beat_every_s)


def _session_key(job: Job) -> str:
    """The session a job works on (a job that names none is its own key: it runs alone anyway)."""
    fields = job.fields
    if job.kind == JobKind.RESUME and "session_id" in fields:
        return fields["session_id"]
    if job.kind == JobKind.START and {"team_id", "channel_id", "thread_ts"} <= fields.keys():
        return session_id_for(fields["team_id"], fields["channel_id"], fields["thread_ts"])
    return f"job:{job.job_id}"
