"""The worker: runs agent jobs, delivers the outbox and fires the schedule, until told to stop.

Jobs: read new ones for this consumer; also claim jobs that another worker took and never
acknowledged (it died), and remove such dead workers from the group once their jobs are claimed
(looked for every quarter of the claim time, not before every read). Up to ``concurrency`` jobs
run at once on threads (``WORKER_CONCURRENCY``), never two of one session (see ``bot.flow.job_pool``);
one heartbeat keeps every held job claimed while it runs.
A failed job is retried by the same worker after a backoff (1 s, 2 s, ... up to half the claim
time), and its thread is told once that the step is delayed (as soon as the outbox can be written:
during a Redis outage the notice waits for the retry). A job that keeps failing is given up after
a few deliveries: the thread is told, the audit trail records it, and the job is acknowledged so
it cannot block the queue; a step that failed only because Redis was unreachable does not count
toward that. The outbox is delivered by a second thread that wakes as soon as an entry is queued;
a third fires due reminders, escalations and expiries; a fourth records the worker's heartbeat
(``bot.store.worker_heartbeats``) while each of the other three keeps stepping, so a hung loop
shows as a dead worker to ``python -m bot worker-health``. A worker stopped cleanly hands its waiting
retries to the others and leaves the group. An error in the agent's own code on its responses
(``AgentCodeError``) is not retried at all: it would fail the same way until someone fixes the agent;
nor is a factory or agent that cannot be built or run as written (``AgentSetupError``: a type error,
a missing method);
nor is a value the agent produced that no record can hold (``UnstorableValueError``: NaN, an object).
Nor is a job that can never run (``Job.problem``: not UTF-8, a field missing): it is quarantined,
i.e. logged with its id, recorded in the audit trail as ``quarantined`` and acknowledged.
"""

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import redis
from opentelemetry.trace import SpanKind

from bot.domain.records import session_id_for
from bot.flow.escalation import Escalator
from bot.flow.job_pool import JobPool
from bot.flow.runner import AgentCodeError, AgentSetupError, SessionRunner
from bot.flow.uninstalls import Uninstalls
from bot.observe import metrics, tracing
from bot.observe.logs import log_context
from bot.render.texts import thread_posts
from bot.slack.delivery import Deliverer
from bot.store import index_build
from bot.store.jobs import Job, JobKind
from bot.store.stores import Stores
from bot.store.worker_heartbeats import WorkerHeartbeats
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
        claim_idle_ms: How long a job may stay unacknowledged before another worker takes it.
        retry_first_s: How long this worker waits before retrying its own failed job (doubling).
        concurrency: How many jobs run at once (threads); never two of one session.
    """

    stores: Stores
    runner: SessionRunner
    deliverer: Deliverer
    escalator: Escalator
    uninstalls: Uninstalls | None = None
    claim_idle_ms: int = 30_000
    retry_first_s: float = 1.0
    audit_max_entries: int = 1_000_000
    audit_keep_unexported: bool = False
    trim_every_s: float = 60.0
    concurrency: int = 1
    heartbeats: WorkerHeartbeats | None = None
    stall_s: float = STALL_S
    consumer: str = field(default_factory=lambda: f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}")
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _next_trim: float = field(default=0.0, repr=False)
    _next_prune: float = field(default=0.0, repr=False)
    _next_claim: float = field(default=0.0, repr=False)
    _pool: JobPool | None = field(default=None, repr=False)
    _book: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _retries: dict[str, "_Retry"] = field(default_factory=dict, repr=False)
    _owed_notices: dict[str, str] = field(default_factory=dict, repr=False)
    _told: set[str] = field(default_factory=set, repr=False)
    _failures: dict[str, int] = field(default_factory=dict, repr=False)
    _stepped: dict[str, float] = field(default_factory=dict, repr=False)

    def run_jobs_once(self, *, block_ms: int = 1000) -> int:
        """Take jobs as ``start_jobs`` does and wait until they are done; return how many were taken."""
        taken = self.start_jobs(block_ms=block_ms)
        self.pool.wait_idle()
        return taken

    def start_jobs(self, *, block_ms: int = 1000) -> int:
        """Hand jobs to the pool, as many as it has room for; return how many.

        Own failed jobs whose retry is due come first, else stale jobs of dead workers (when it is time
        to look), else new ones (blocking up to ``block_ms``).
        """
        free = self.pool.free()
        if free == 0:
            return 0
        jobs = self._due_retries(limit=free)
        if not jobs and time.monotonic() >= self._next_claim:
            # A job looks abandoned only after the claim time: looking four times per claim time is enough.
            self._next_claim = time.monotonic() + self.claim_idle_ms / 4000
            jobs = self.stores.jobs.claim_stale(self.consumer, min_idle_ms=self.claim_idle_ms, count=free)
            self._prune_consumers()
        if not jobs:
            jobs = self.stores.jobs.read(self.consumer, block_ms=self._read_block_ms(block_ms), count=free)
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
                touch=lambda jobs: self.stores.jobs.touch(jobs, self.consumer),
                # A third of the claim time (never a busy loop, even with a claim time of 0).
                beat_every_s=max(self.claim_idle_ms / 3000, _MIN_BEAT_S),
            )
        return self._pool

    def deliver_once(self, *, wait_s: float = 1.0) -> int:
        """Deliver what is due; if nothing was, wait for new entries up to ``wait_s``."""
        handled = self.deliverer.deliver_due()
        if not handled:
            self.stores.outbox.wait_for_work(self.deliverer.idle_wait_s(wait_s))
        return handled

    def tick_once(self, *, idle_s: float = 1.0) -> int:
        """Fire due reminders, escalations and expiries, carry out owed uninstalls; trim the audit trail now and then.

        Sleeps ``idle_s`` when nothing was due.
        """
        fired = self.escalator.tick() + self.finish_uninstalls()
        if time.monotonic() >= self._next_trim:
            self._next_trim = time.monotonic() + self.trim_every_s
            self.stores.audit.trim(max_entries=self.audit_max_entries, keep_unexported=self.audit_keep_unexported)
        if not fired:
            self._stop.wait(idle_s)
        return fired

    def finish_uninstalls(self) -> int:
        """Carry out the uninstalls Slack was answered for (``bot.store.owed_uninstalls``); return how many.

        One that fails stays owed: it is taken again when its lease runs out.
        """
        if self.uninstalls is None:
            return 0
        owed = self.stores.owed_uninstalls.take()
        for owed_id, uninstall in owed:
            self.uninstalls.carry_out(uninstall)
            self.stores.owed_uninstalls.done(owed_id)
        return len(owed)

    def run_forever(self) -> None:
        """Every loop (jobs, outbox, schedule, and the heartbeat when set), until ``stop()``.

        First, once per Redis, the indexes are built from records stored before them (``bot.store.index_build``).
        Once stopped, hand back waiting retries and leave the group.
        """
        self.stores.jobs.ensure_group()
        index_build.ensure(self.stores)  # an upgrade lists the records stored before the indexes: once, one read after
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
            with self._book:
                retries = list(self._retries.values())
                self._retries.clear()
            for retry in retries:
                self.stores.jobs.hand_back(retry.job, self.consumer, idle_ms=self.claim_idle_ms)
            self.stores.jobs.leave(self.consumer)
        except redis.RedisError:
            logger.warning("worker=<%s> | could not leave the group; another worker prunes it", self.consumer)

    def stop(self) -> None:
        """Ask both loops to finish their current step and return."""
        self._stop.set()

    def _start_jobs_when_free(self) -> int:
        if self.pool.wait_for_free(timeout_s=1.0) == 0:
            return 0
        return self.start_jobs()

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
        with self._book:
            self._retries.pop(job.job_id, None)
        problem = job.problem()
        if problem is not None:
            self._quarantine(job, problem)
            return "quarantined"
        owed = self._owed_notices.get(job.job_id)
        if owed is not None:
            self._tell_delayed(job, owed)
        try:
            self.runner.handle(job)
        except AgentCodeError as error:
            tracing.current_failed("the agent's code failed", error)
            self._agent_code_failed(job, error)
            return "failed"
        except AgentSetupError as error:
            tracing.current_failed("the agent cannot be built or run", error)
            self._agent_setup_failed(job, error)
            return "failed"
        except UnstorableValueError as error:
            tracing.current_failed("the agent gave a value that cannot be stored", error)
            self._unstorable(job, error)
            return "failed"
        except Exception as error:  # boundary: the agent's code may raise anything; the job is retried
            summary = f"{type(error).__name__}: {error}"
            tracing.current_failed(summary, error)
            outage = isinstance(error, redis.ConnectionError | redis.TimeoutError)
            if job.deliveries >= MAX_DELIVERIES and not outage:
                self._give_up(job, summary)
                return "abandoned"
            logger.exception("job_id=<%s>, kind=<%s> | job failed; it will be retried", job.job_id, job.kind)
            self._retry_later(job, counted=not outage)
            self._tell_delayed(
                job, thread_posts.redis_unreachable() if outage else thread_posts.agent_retrying(summary)
            )
            return "retry"
        self.stores.jobs.ack(job)
        self._forget(job.job_id)
        return "done"

    def _retry_later(self, job: Job, *, counted: bool) -> None:
        failures = self._failures[job.job_id] = self._failures.get(job.job_id, 0) + 1
        # Under half the claim time: the job stays ours, no other worker takes it meanwhile.
        delay_s = min(self.retry_first_s * 2 ** (failures - 1), self.claim_idle_ms / 2000)
        with self._book:
            self._retries[job.job_id] = _Retry(job, time.monotonic() + delay_s, counted)

    def _due_retries(self, *, limit: int) -> list[Job]:
        now = time.monotonic()
        with self._book:
            due = sorted((retry for retry in self._retries.values() if retry.due <= now), key=lambda r: r.due)[:limit]
            for retry in due:
                del self._retries[retry.job.job_id]
        jobs: list[Job] = []
        for index, retry in enumerate(due):
            job_id = retry.job.job_id
            try:
                again = self.stores.jobs.redeliver(retry.job, self.consumer, count=retry.counted)
            except redis.RedisError:
                # Redis went away: the retries not handed over yet stay due (dropped here, a job would wait for
                # the claim time, as if this worker had died).
                with self._book:
                    for left in due[index:]:
                        self._retries.setdefault(left.job.job_id, left)
                if jobs:
                    return jobs
                raise
            if again is None:
                logger.info("job_id=<%s> | taken over by another worker or gone; not retried here", job_id)
                self._forget(job_id)
                continue
            jobs.append(again)
        return jobs

    def _read_block_ms(self, block_ms: int) -> int:
        with self._book:
            if not self._retries:
                return block_ms
            until_next = min(retry.due for retry in self._retries.values()) - time.monotonic()
        return max(1, min(block_ms, int(until_next * 1000)))

    def _tell_delayed(self, job: Job, text: str) -> None:
        """Tell the job's thread once that its step is delayed; when Redis is down, owe it until the retry."""
        if job.job_id in self._told:
            return
        try:
            # A notice owed here was marked (or the mark failed): only this worker can still send it.
            if self.stores.jobs.first_notice(job) or job.job_id in self._owed_notices:
                self.runner.report_failure(job, self._owed_notices.get(job.job_id, text))
        except (redis.RedisError, KeyError):  # Redis unreachable, or no thread recorded for the session yet
            logger.warning("job_id=<%s> | could not tell the thread yet; will on the retry", job.job_id)
            self._owed_notices.setdefault(job.job_id, text)
            return
        self._owed_notices.pop(job.job_id, None)
        self._told.add(job.job_id)

    def _forget(self, job_id: str) -> None:
        with self._book:
            self._retries.pop(job_id, None)
        self._owed_notices.pop(job_id, None)
        self._told.discard(job_id)
        self._failures.pop(job_id, None)

    def _prune_consumers(self) -> None:
        if time.monotonic() < self._next_prune:
            return
        self._next_prune = time.monotonic() + self.claim_idle_ms / 1000
        removed = self.stores.jobs.prune_consumers(keep=self.consumer, idle_ms=self.claim_idle_ms)
        if removed:
            logger.info("worker=<%s> | removed %d dead consumers from the group", self.consumer, removed)

    def _agent_code_failed(self, job: Job, error: AgentCodeError) -> None:
        """Not retried: the thread is told at once.

        The round stays decided, so a later mention or ``python -m bot resume`` runs the resume again once the agent is
        fixed.
        """
        logger.error("job_id=<%s> | the agent's code failed on its responses, not retried: %s", job.job_id, error)
        self.stores.audit.record(
            "job_failed_in_agent_code", session_id=job.fields.get("session_id", ""), job=job.fields, error=str(error)
        )
        self.runner.report_failure(job, thread_posts.agent_code_failed(str(error), error.shapes))
        self.stores.jobs.ack(job)
        self._forget(job.job_id)

    def _agent_setup_failed(self, job: Job, error: AgentSetupError) -> None:
        """Not retried: ``AGENT_FACTORY`` or the agent it built has a bug that every run would hit again."""
        logger.error(
            "job_id=<%s>, kind=<%s> | the agent cannot be built or run (fix AGENT_FACTORY's code), not retried: %s",
            job.job_id,
            job.kind,
            error,
        )
        self.stores.audit.record(
            "job_failed_agent_setup", session_id=job.fields.get("session_id", ""), job=job.fields, error=str(error)
        )
        self.runner.report_failure(job, thread_posts.agent_setup_failed(str(error)))
        self.stores.jobs.ack(job)
        self._forget(job.job_id)

    def _unstorable(self, job: Job, error: UnstorableValueError) -> None:
        """Not retried: the agent produced a value no record can hold (NaN, an object), every run would."""
        logger.error(
            "job_id=<%s> | the agent produced a value that cannot be stored, not retried: %s", job.job_id, error
        )
        self.stores.audit.record(
            "job_failed_unstorable", session_id=job.fields.get("session_id", ""), job=job.fields, error=str(error)
        )
        self.runner.report_failure(job, thread_posts.agent_value_unstorable(str(error)))
        self.stores.jobs.ack(job)
        self._forget(job.job_id)

    def _quarantine(self, job: Job, problem: str) -> None:
        logger.error("job_id=<%s>, kind=<%s> | malformed job quarantined: %s", job.job_id, job.kind, problem)
        self.stores.audit.record(
            "quarantined",
            session_id=job.fields.get("session_id", ""),
            record="job",
            key=job.job_id,
            job=job.fields,
            why=problem,
        )
        self.stores.jobs.ack(job)
        self._forget(job.job_id)

    def _give_up(self, job: Job, summary: str) -> None:
        logger.error("job_id=<%s> | failed %d times, giving up: %s", job.job_id, job.deliveries, summary)
        self.stores.audit.record(
            "job_abandoned", session_id=job.fields.get("session_id", ""), job=job.fields, error=summary
        )
        self.runner.report_failure(job, thread_posts.agent_gave_up(summary, job.deliveries))
        self.stores.jobs.ack(job)
        self._forget(job.job_id)


def _session_key(job: Job) -> str:
    """The session a job works on (a job that names none is its own key: it runs alone anyway)."""
    fields = job.fields
    if job.kind == JobKind.RESUME and "session_id" in fields:
        return fields["session_id"]
    if job.kind == JobKind.START and {"team_id", "channel_id", "thread_ts"} <= fields.keys():
        return session_id_for(fields["team_id"], fields["channel_id"], fields["thread_ts"])
    return f"job:{job.job_id}"


@dataclass(frozen=True)
class _Retry:
    """A failed job this worker retries itself at ``due`` (monotonic seconds)."""

    job: Job
    due: float
    counted: bool
