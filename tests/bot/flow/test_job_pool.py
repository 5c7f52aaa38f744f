"""``JobPool`` runs one job id once at a time: a job handed to the worker twice (a queue bug, a late claim) is dropped,
never run twice nor left to jam its session (its second copy's end used to raise ``KeyError`` in the runner)."""

import threading
import time
from collections.abc import Callable

from bot.flow.job_pool import JobPool
from bot.store.queues.jobs import Job


def _pool() -> tuple[JobPool, list[str], threading.Event]:
    """A pool whose jobs run until the event is set; the ids of the jobs it ran, in order."""
    release = threading.Event()
    ran: list[str] = []

    def handle(job: Job) -> None:
        ran.append(job.job_id)
        release.wait(5)

    return _pool_running(handle), ran, release


def _pool_running(handle: Callable[[Job], None], *, escaped: Callable[[Job], None] = lambda _job: None) -> JobPool:
    return JobPool(
        size=4,
        handle=handle,
        session_of=lambda job: job.fields["session_id"],
        touch=lambda _: None,
        beat_every_s=60,
        escaped=escaped,
        idle_s=0.5,
    )


def _resume(job_id: str, version: int) -> Job:
    return Job(job_id, {"kind": "resume", "session_id": "S", "version": str(version)})


def test_the_same_job_submitted_twice_while_it_runs_runs_once_and_its_session_goes_on() -> None:
    pool, ran, release = _pool()
    job = _resume("0/1-0", 1)
    pool.submit(job)
    pool.submit(job)  # a late claim's copy of the same job, while it runs
    time.sleep(0.1)
    assert pool.free() == 3  # held once
    release.set()
    assert pool.wait_idle(timeout_s=2)
    pool.submit(_resume("0/2-0", 2))  # the session's next job
    assert pool.wait_idle(timeout_s=2), f"the session's next job never ran (ran: {ran})"
    assert ran == ["0/1-0", "0/2-0"]


def test_the_same_job_submitted_twice_while_it_waits_for_its_session_runs_once() -> None:
    pool, ran, release = _pool()
    pool.submit(_resume("0/1-0", 1))
    waiting = _resume("0/2-0", 2)
    pool.submit(waiting)  # queued behind its session's running job
    pool.submit(waiting)
    release.set()
    assert pool.wait_idle(timeout_s=2)
    assert ran == ["0/1-0", "0/2-0"]


def test_a_job_whose_handler_escaped_is_let_go() -> None:
    """A handler that raised left its job neither acknowledged nor retried: the pool tells ``escaped``, so the queue
    lets it go and a stale claim hands it over again (it used to stay held by the worker for good, never run again)."""
    escaped: list[str] = []

    def handle(job: Job) -> None:
        raise RuntimeError("the audit trail refused the record")

    pool = _pool_running(handle, escaped=lambda job: escaped.append(job.job_id))
    pool.submit(_resume("0/1-0", 1))
    assert pool.wait_idle(timeout_s=2)
    assert escaped == ["0/1-0"]
