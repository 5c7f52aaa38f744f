"""Runs a worker's jobs on up to ``size`` threads: one job per session at a time, one heartbeat for all.

A job whose session already has a job running here waits, still held and kept claimed, until that
one finishes: two jobs of one session never run at once in one worker (between workers the
session's compare-and-set version refuses the stale writer, whose job is then retried).
Every held job, running or waiting, is kept claimed by a single heartbeat thread that touches them
all in one command every ``beat_every_s``; it runs only while something is held. Runner threads
start on demand and end after idling ``idle_s``, so an idle worker keeps no thread.
"""

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Final

import redis

from bot.store.queues.jobs import Job

logger = logging.getLogger(__name__)

_IDLE_S: Final = 5.0


class JobPool:
    """Jobs held by one worker: handed to runner threads, at most one per session at a time.

    Args:
        size: How many jobs may be held at once (running or waiting for their session).
        handle: Runs one job to its end (it must not raise; whatever it raises is logged).
        session_of: The session a job belongs to (the key two jobs must not share while running).
        touch: Keeps the given jobs claimed (one Redis command for all).
        escaped: Told of a job whose ``handle`` raised (it was neither acknowledged nor retried): let it go, so that a
            claim after the claim time hands it over again.
        beat_every_s: How often held jobs are touched.
        idle_s: How long a runner thread waits for a job before it ends.
    """

    def __init__(
        self,
        *,
        size: int,
        handle: Callable[[Job], None],
        session_of: Callable[[Job], str],
        touch: Callable[[list[Job]], None],
        beat_every_s: float,
        escaped: Callable[[Job], None] = lambda _job: None,
        idle_s: float = _IDLE_S,
    ) -> None:
        """Nothing starts until the first job is submitted."""
        if size < 1:
            raise ValueError(f"size=<{size}> | must be at least 1")
        self.size = size
        self._handle = handle
        self._session_of = session_of
        self._touch = touch
        self._escaped = escaped
        self._beat_every_s = beat_every_s
        self._idle_s = idle_s
        self._lock = threading.Lock()
        # Two conditions on one lock: a ready job wakes one idle runner (not every thread of the pool, which
        # then all contend for the lock and the GIL: measured as a fifth of a busy worker's CPU); a job that
        # ends wakes the few that wait for room (the reader, the heartbeat, ``wait_idle``).
        self._work = threading.Condition(self._lock)
        self._room = threading.Condition(self._lock)
        self._held: dict[str, Job] = {}
        self._queued_by_session: dict[str, deque[Job]] = {}
        self._ready: deque[Job] = deque()
        self._runners = 0
        self._idle_runners = 0
        self._beating = False
        self._fatal: BaseException | None = None

    def free(self) -> int:
        """How many more jobs may be submitted now."""
        with self._lock:
            return self.size - len(self._held)

    def held(self) -> list[Job]:
        """The jobs held now (running or waiting for their session)."""
        with self._lock:
            return list(self._held.values())

    def submit(self, job: Job) -> None:
        """Run ``job`` as soon as a thread is free and no other job of its session runs here.

        A job held already (queued or running: handed over twice) is dropped: one job id runs once at a time here.
        """
        session = self._session_of(job)
        with self._lock:
            if job.job_id in self._held:
                logger.warning("job_id=<%s> | submitted again while held here: dropped", job.job_id)
                return
            self._held[job.job_id] = job
            if session in self._queued_by_session:
                self._queued_by_session[session].append(job)  # runs when the session's current job ends
            else:
                self._queued_by_session[session] = deque()
                self._make_ready(job)
            if not self._beating:
                self._beating = True
                threading.Thread(target=self._beat, name="heartbeat", daemon=True).start()

    def wait_for_free(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` until a job may be submitted; return how many may."""
        with self._lock:
            self._room.wait_for(lambda: len(self._held) < self.size, timeout=timeout_s)
            self._raise_fatal()
            return self.size - len(self._held)

    def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Wait until no job is held; return whether none is.

        Raises:
            BaseException: What a job raised that is not an ``Exception`` (``SystemExit``, say), once.
        """
        with self._lock:
            idle = self._room.wait_for(lambda: not self._held, timeout=timeout_s)
            self._raise_fatal()
            return idle

    def _raise_fatal(self) -> None:
        fatal, self._fatal = self._fatal, None
        if fatal is not None:
            raise fatal

    def _make_ready(self, job: Job) -> None:
        self._ready.append(job)
        # Each idle runner takes one ready job; a job beyond those needs a new runner (up to the size).
        if len(self._ready) > self._idle_runners and self._runners < self.size:
            self._runners += 1
            threading.Thread(target=self._run, name=f"job-{self._runners}", daemon=True).start()
        else:
            self._work.notify()

    def _run(self) -> None:
        while True:
            with self._lock:
                self._idle_runners += 1
                self._work.wait_for(lambda: bool(self._ready), timeout=self._idle_s)
                self._idle_runners -= 1
                if not self._ready:
                    self._runners -= 1
                    return
                job = self._ready.popleft()
            try:
                self._handle(job)
            except Exception:  # boundary: a runner thread outlives any bug in the job it ran
                logger.exception("job_id=<%s> | job handler failed", job.job_id)
                self._escaped(job)
            except BaseException as error:
                # Not an error of the job (the process is going down): whoever waits on the pool gets it.
                with self._lock:
                    self._runners -= 1
                    self._fatal = self._fatal or error
                return
            finally:
                self._finished(job)

    def _finished(self, job: Job) -> None:
        session = self._session_of(job)
        with self._lock:
            del self._held[job.job_id]
            waiting = self._queued_by_session[session]
            if waiting:
                self._make_ready(waiting.popleft())
            else:
                del self._queued_by_session[session]
            self._room.notify_all()

    def _beat(self) -> None:
        while True:
            with self._lock:
                self._room.wait_for(lambda: not self._held, timeout=self._beat_every_s)
                if not self._held:
                    self._beating = False
                    return
                held = list(self._held.values())
            try:
                self._touch(held)
            except redis.RedisError:
                logger.exception("jobs=<%d> | heartbeat failed; retrying at the next beat", len(held))
