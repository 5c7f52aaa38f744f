"""Agent jobs on a Redis Stream with one consumer group: at-least-once, claimable when a worker dies.

Two kinds: ``start`` (a person asked something in a thread) and ``resume`` (every approval of a
round has a decision; queued by the decision script in ``bot.approvals``). A job stays pending
until acknowledged; a worker that dies leaves it to be claimed by another (XAUTOCLAIM).
"""

import time
from dataclasses import dataclass
from typing import Any, Final

import redis

from bot import keys

_MAX_JOBS: Final = 100_000  # stream length bound (approximate trim); acked jobs are deleted anyway


@dataclass(frozen=True)
class Job:
    """One delivery of a job.

    Attributes:
        job_id: The stream entry id.
        fields: The job's fields (``kind``, ``session_id``, ...).
        deliveries: How many times it was delivered (1 on the first).
    """

    job_id: str
    fields: dict[str, str]
    deliveries: int = 1

    @property
    def kind(self) -> str:
        """``start`` or ``resume``."""
        return self.fields.get("kind", "")


class JobQueue:
    """Queue, read, claim and acknowledge jobs."""

    def __init__(self, client: redis.Redis) -> None:
        """Remember the client; call ``ensure_group`` once before reading."""
        self._client = client

    def ensure_group(self) -> None:
        """Create the stream and the consumer group if they do not exist yet."""
        try:
            self._client.xgroup_create(keys.JOBS, keys.JOBS_GROUP, id="0", mkstream=True)
        except redis.ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise

    def enqueue(self, fields: dict[str, str], *, pipeline: redis.client.Pipeline | None = None) -> None:
        """Queue a job (inside the caller's transaction, if given)."""
        target = pipeline if pipeline is not None else self._client
        target.xadd(keys.JOBS, fields, maxlen=_MAX_JOBS, approximate=True)  # type: ignore[arg-type]

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
            jobs.append(_job(entry_id, fields, deliveries=self._deliveries(_text(entry_id))))
        return jobs

    def touch(self, job: Job, consumer: str) -> None:
        """Reset the job's idle time (a running job must not look abandoned to other workers)."""
        self._client.xclaim(keys.JOBS, keys.JOBS_GROUP, consumer, 0, [job.job_id], justid=True)

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
    return Job(_text(entry_id), {_text(key): _text(value) for key, value in fields.items()}, deliveries)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def now_ms() -> int:
    """Wall-clock milliseconds (job timestamps)."""
    return int(time.time() * 1000)
