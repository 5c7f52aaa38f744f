"""Agent jobs on a Redis Stream with one consumer group: at-least-once, claimable when a worker dies.

Two kinds: ``start`` (a person asked something in a thread) and ``resume`` (every approval of a
round has a decision; queued by the decision script in ``bot.store.approvals``). A job stays pending
until acknowledged; a worker that dies leaves it to be claimed by another (XAUTOCLAIM).
A worker retries its own failed job itself (``redeliver``), and consumers that are gone (idle,
nothing pending) are removed from the group, so the group lists only live workers.
A job that can never run (not UTF-8, an unknown kind, a field missing) says so (``Job.problem``):
the worker quarantines it at once instead of retrying it.
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import redis

from bot.store import keys

_MAX_JOBS: Final = 100_000  # stream length bound (approximate trim); acked jobs are deleted anyway
_TOLD_SECONDS: Final = 86_400  # a delayed job is done long before: its delay notice is remembered a day
_FIELDS_NEEDED: Final = {
    "start": ("team_id", "channel_id", "thread_ts", "user_id", "text", "prompt_id"),
    "resume": ("session_id", "version"),
}

# KEYS: jobs stream. ARGV: group, consumer, job id, "count" or "keep".
# Claims the job again for the consumer only if it still holds it (another worker may have taken
# it over); "count" counts a delivery, "keep" does not. Returns {fields, deliveries}, or false.
_REDELIVER: Final = """
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if #pending == 0 or pending[1][2] ~= ARGV[2] then return false end
if ARGV[4] == 'keep' then
  redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
  local entry = redis.call('XRANGE', KEYS[1], ARGV[3], ARGV[3])
  if #entry == 0 then return false end
  return {entry[1][2], pending[1][4]}
end
local claimed = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3])
if #claimed == 0 or not claimed[1][2] then return false end
return {claimed[1][2], pending[1][4] + 1}
"""

# KEYS: jobs stream. ARGV: group, idle ms, consumer to keep.
# Deletes every other consumer with nothing pending and idle longer than ARGV[2]; returns how
# many. One script, so no job can be delivered to a consumer between the check and the delete
# (deleting a consumer drops its pending entries).
_PRUNE: Final = """
local removed = 0
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for index = 1, #consumer, 2 do info[consumer[index]] = consumer[index + 1] end
  if info['name'] ~= ARGV[3] and tonumber(info['pending']) == 0 and tonumber(info['idle']) > tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    removed = removed + 1
  end
end
return removed
"""

# KEYS: jobs stream. ARGV: group, consumer.
# Deletes the consumer if it holds no job (else its jobs wait for another worker to claim them).
_LEAVE: Final = """
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for index = 1, #consumer, 2 do info[consumer[index]] = consumer[index + 1] end
  if info['name'] == ARGV[2] then
    if tonumber(info['pending']) > 0 then return 0 end
    return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2]) + 1
  end
end
return 1
"""


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
        """``start`` or ``resume``."""
        return self.fields.get("kind", "")

    def problem(self) -> str | None:
        """Why the job can never run (every delivery would fail the same way), or ``None``."""
        if self.unreadable:
            return self.unreadable
        needed = _FIELDS_NEEDED.get(self.kind)
        if needed is None:
            return f"unknown kind {self.kind!r}"
        missing = [name for name in needed if name not in self.fields]
        if missing:
            return f"missing {', '.join(missing)}"
        if self.kind == "resume":
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
        self._redeliver = client.register_script(_REDELIVER)
        self._prune = client.register_script(_PRUNE)
        self._leave = client.register_script(_LEAVE)

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
        return [_text(info["name"]) for info in self._client.xinfo_consumers(keys.JOBS, keys.JOBS_GROUP)]

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
        return Job(_text(entry_id), {_text(key): _text(value) for key, value in fields.items()}, deliveries)
    except UnicodeDecodeError as error:
        shown = {_shown(key): _shown(value) for key, value in fields.items()}
        return Job(_text(entry_id), shown, deliveries, unreadable=f"fields are not UTF-8: {error}")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _shown(value: bytes | str) -> str:
    """Text for logs and the audit trail even when the bytes are not UTF-8 (``\\xff`` for a bad byte)."""
    return value.decode(errors="backslashreplace") if isinstance(value, bytes) else value


def now_ms() -> int:
    """Wall-clock milliseconds (job timestamps)."""
    return int(time.time() * 1000)
