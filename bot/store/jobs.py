"""Agent jobs on a Redis Stream with one consumer group: at-least-once, claimable when a worker dies.

Two kinds, each a typed record queued only through ``JobQueue``: ``StartJob`` (a person asked
something in a thread) and ``ResumeJob`` (every approval of a round has a decision; the decide
script queues it in the decision's atomic step, with the fields ``JobQueue.script_resume`` gives
it). A job stays pending
until acknowledged; a worker that dies leaves it to be claimed by another (XAUTOCLAIM).
A worker retries its own failed job itself (``redeliver``), and consumers that are gone (idle,
nothing pending) are removed from the group, so the group lists only live workers.
A job that can never run (not UTF-8, an unknown kind, a field missing) says so (``Job.problem``):
the worker quarantines it at once instead of retrying it.
"""

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, Final

import redis

from bot.store import keys, scripts
from state.text import as_text, shown

_MAX_JOBS: Final = 100_000  # stream length bound (approximate trim); acked jobs are deleted anyway
_TOLD_SECONDS: Final = 86_400  # a delayed job is done long before: its delay notice is remembered a day


class JobKind(StrEnum):
    """What a job asks the worker to do."""

    START = "start"
    RESUME = "resume"


@dataclass(frozen=True)
class StartJob:
    """A person asked the agent something in a thread (a mention, or ``/agent``)."""

    team_id: str
    channel_id: str
    thread_ts: str
    user_id: str
    text: str
    prompt_id: str
    """Remembered in the agent's state, so a redelivered start continues instead of asking again."""

    kind = JobKind.START

    def fields(self) -> dict[str, str]:
        """The stream entry's fields."""
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class ResumeJob:
    """Every approval of the session's round (``version``) has a decision: resume the agent with them."""

    session_id: str
    version: int

    kind = JobKind.RESUME

    def fields(self) -> dict[str, str]:
        """The stream entry's fields."""
        return {"kind": self.kind, "session_id": self.session_id, "version": str(self.version)}


JobRecord = StartJob | ResumeJob
_FIELDS_NEEDED: Final = {
    JobKind.START: tuple(field.name for field in dataclasses.fields(StartJob)),
    JobKind.RESUME: tuple(field.name for field in dataclasses.fields(ResumeJob)),
}


@dataclass(frozen=True)
class Job:
    """One delivery of a job.

    Attributes:
        job_id: The stream entry id.
        fields: The job's fields (``kind``, ``session_id``, ...).
        deliveries: How many times it was delivered (1 on the first).
        unreadable: Why the stored fields could not be read as they are ("" when they could).
    """

    job_id: str
    fields: dict[str, str]
    deliveries: int = 1
    unreadable: str = ""

    @property
    def kind(self) -> str:
        """``start`` or ``resume`` (``JobKind``), or what an unreadable job says."""
        return self.fields.get("kind", "")

    def record(self) -> JobRecord:
        """The job as its typed record (call ``problem`` first: this raises ``KeyError``/``ValueError`` otherwise)."""
        if self.kind == JobKind.RESUME:
            return ResumeJob(self.fields["session_id"], int(self.fields["version"]))
        if self.kind == JobKind.START:
            return StartJob(**{name: self.fields[name] for name in _FIELDS_NEEDED[JobKind.START]})
        raise ValueError(f"job_id=<{self.job_id}> | unknown kind {self.kind!r}")

    def problem(self) -> str | None:
        """Why the job can never run (every delivery would fail the same way), or ``None``."""
        if self.unreadable:
            return self.unreadable
        needed = _FIELDS_NEEDED.get(self.kind)  # type: ignore[call-overload]
        if needed is None:
            return f"unknown kind {self.kind!r}"
        missing = [name for name in needed if name not in self.fields]
        if missing:
            return f"missing {', '.join(missing)}"
        if self.kind == JobKind.RESUME:
            if not self.fields["version"].isdigit():
                return f"version {self.fields['version']!r} is not a number"
            try:
                keys.round_(self.fields["session_id"])
            except ValueError as error:
                return str(error)
        return None


class JobQueue:
    """Queue, read, claim and acknowledge jobs."""

    def __init__(self, client: redis.Redis) -> None:
        """Remember the client; call ``ensure_group`` once before reading."""
        self._client = client
        self._redeliver = client.register_script(scripts.REDELIVER_JOB)
        self._prune = client.register_script(scripts.PRUNE_CONSUMERS)
        self._leave = client.register_script(scripts.LEAVE_GROUP)

    def ensure_group(self) -> None:
        """Create the stream and the consumer group if they do not exist yet."""
        try:
            self._client.xgroup_create(keys.JOBS, keys.JOBS_GROUP, id="0", mkstream=True)
        except redis.ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise

    def enqueue(self, job: JobRecord, *, pipeline: redis.client.Pipeline | None = None) -> None:
        """Queue a job (inside the caller's transaction, if given)."""
        target = pipeline if pipeline is not None else self._client
        target.xadd(keys.JOBS, job.fields(), maxlen=_MAX_JOBS, approximate=True)  # type: ignore[arg-type]

    @staticmethod
    def script_resume(session_id: str) -> str:
        """The resume job for a script to queue (``bot.store.scripts``): the stream's bound and the job's
        fields but its version, which only the script knows (the round's) and appends."""
        fields = ResumeJob(session_id, 0).fields()
        del fields["version"]
        return json.dumps([_MAX_JOBS, *(item for pair in fields.items() for item in pair), "version"])

    def read(self, consumer: str, *, block_ms: int = 1000, count: int = 1) -> list[Job]:
        """New jobs for ``consumer`` (blocks up to ``block_ms``)."""
        response: Any = self._client.xreadgroup(
            keys.JOBS_GROUP, consumer, {keys.JOBS: ">"}, count=count, block=block_ms
        )
        jobs: list[Job] = []
        for _stream, entries in response or []:
            jobs.extend(_job(entry_id, fields) for entry_id, fields in entries)
        return jobs

    def claim_stale(self, consumer: str, *, min_idle_ms: int, count: int = 10) -> list[Job]:
        """Take over jobs another consumer has held for ``min_idle_ms`` without acknowledging them."""
        response: Any = self._client.xautoclaim(keys.JOBS, keys.JOBS_GROUP, consumer, min_idle_ms, "0-0", count=count)
        entries = response[1]
        jobs = []
        for entry_id, fields in entries:
            if fields is None:  # deleted while pending
                continue
            jobs.append(_job(entry_id, fields, deliveries=self._deliveries(as_text(entry_id))))
        return jobs

    def redeliver(self, job: Job, consumer: str, *, count: bool = True) -> Job | None:
        """``job`` again for ``consumer``, if it still holds it (``None``: taken over or gone).

        ``count=False`` does not count a delivery (the step never reached the agent: Redis was down).
        """
        reply: Any = self._redeliver(
            keys=[keys.JOBS], args=[keys.JOBS_GROUP, consumer, job.job_id, "count" if count else "keep"]
        )
        if not reply:
            return None
        flat, deliveries = reply
        return _job(job.job_id, dict(zip(flat[::2], flat[1::2], strict=True)), deliveries=int(deliveries))

    def hand_back(self, job: Job, consumer: str, *, idle_ms: int) -> None:
        """Make ``job`` look abandoned at once, so that the next worker claims it without waiting."""
        self._client.xclaim(keys.JOBS, keys.JOBS_GROUP, consumer, 0, [job.job_id], idle=idle_ms, justid=True)

    def prune_consumers(self, *, keep: str, idle_ms: int) -> int:
        """Remove consumers (dead workers) with nothing pending, idle over ``idle_ms``; return how many."""
        return int(self._prune(keys=[keys.JOBS], args=[keys.JOBS_GROUP, idle_ms, keep]))

    def leave(self, consumer: str) -> bool:
        """Remove ``consumer`` from the group unless it still holds jobs; return whether it is gone."""
        return bool(self._leave(keys=[keys.JOBS], args=[keys.JOBS_GROUP, consumer]))

    def consumers(self) -> list[str]:
        """Names of the group's consumers."""
        return [as_text(info["name"]) for info in self._client.xinfo_consumers(keys.JOBS, keys.JOBS_GROUP)]

    def first_notice(self, job: Job) -> bool:
        """Whether the job's thread has not been told yet that it is delayed (and mark it told)."""
        return bool(self._client.set(keys.job_told(job.job_id), "1", nx=True, ex=_TOLD_SECONDS))

    def touch(self, jobs: Sequence[Job], consumer: str) -> None:
        """Reset the jobs' idle time, all in one command (running jobs must not look abandoned to other workers)."""
        if jobs:
            self._client.xclaim(keys.JOBS, keys.JOBS_GROUP, consumer, 0, [job.job_id for job in jobs], justid=True)

    def ack(self, job: Job) -> None:
        """The job is done: acknowledge and delete it."""
        pipeline = self._client.pipeline(transaction=True)
        pipeline.xack(keys.JOBS, keys.JOBS_GROUP, job.job_id)
        pipeline.xdel(keys.JOBS, job.job_id)
        pipeline.execute()

    def pending_count(self) -> int:
        """Jobs delivered but not acknowledged."""
        summary = self._client.xpending(keys.JOBS, keys.JOBS_GROUP)
        return int(summary["pending"])

    def _deliveries(self, entry_id: str) -> int:
        details = self._client.xpending_range(keys.JOBS, keys.JOBS_GROUP, entry_id, entry_id, 1)
        return int(details[0]["times_delivered"]) if details else 1


def _job(entry_id: bytes | str, fields: dict[Any, Any], *, deliveries: int = 1) -> Job:
    try:
        return Job(as_text(entry_id), {as_text(key): as_text(value) for key, value in fields.items()}, deliveries)
    except UnicodeDecodeError as error:
        readable = {shown(key): shown(value) for key, value in fields.items()}
        return Job(as_text(entry_id), readable, deliveries, unreadable=f"fields are not UTF-8: {error}")


def now_ms() -> int:
    """Wall-clock milliseconds (job timestamps)."""
    return int(time.time() * 1000)
