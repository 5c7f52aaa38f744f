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

A job goes on its session's shard (``bot.store.keys``): the decide script queues a resume in the same
atomic step as the decision. Workers read every shard: on one server one XREADGROUP covers every
stream; on a cluster, whose streams live on different masters, each master is read on its own
(``bot.store.queues.shard_trouble``) and an idle read waits on each shard in turn, briefly (``CLUSTER_WAIT_MS``).
A read (or a claim of stale jobs) whose reply may be lost has made its jobs this consumer's: the shard's next read takes
them from this consumer's own history (id 0) instead of leaving them to the claim time. A reply counts as maybe lost
when the call raised a connection error or timeout, when an attempt of it failed (retried, or given up after: a failed
attempt counted on the read's thread, ``bot.store.failed_attempts``: the bot's clients from
``bot.services.connect_redis``), or when it took ``RETRIED_AFTER_S`` (an attempt timed out: any client). A reply lost
otherwise (another client's silent retry) still waits for the claim time. A job is handed to a consumer once until
acknowledged, handed back, taken over or let go (its handler escaped): every read, history read and claim (a late answer
too) passes ``JobHolds.hand_over`` (``bot.store.queues.job_holds``), which drops what the consumer holds and what was
acknowledged lately.
"""

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, Final, cast

import redis
from redis.cluster import RedisCluster
from redis.exceptions import RedisClusterException

from bot.domain.records import session_id_for
from bot.observe.tracing import TRACE_FIELD, current_traceparent, valid_traceparent
from bot.store import failed_attempts, keys, scripts
from bot.store.queues.job_holds import JobHolds
from bot.store.queues.shard_trouble import LAGGARD_S, RETRIED_AFTER_S, ShardRests, each_shard, one_shard
from bot.store.waits import BLOCKING_WAIT_MAX_S
from state.text import as_text, shown

logger = logging.getLogger(__name__)

CLUSTER_WAIT_MS: Final = 20
"""On a cluster, how long an idle read waits on one shard before it looks at every shard again."""
_READ: Final = "the job stream's read"
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

    @property
    def session_id(self) -> str:
        """The session of the job's thread (its shard holds the job)."""
        return session_id_for(self.team_id, self.channel_id, self.thread_ts)

    def fields(self) -> dict[str, str]:
        """The stream entry's fields (with the trace of the request, when one is recorded)."""
        return {"kind": self.kind, **asdict(self), **_trace_field()}


@dataclass(frozen=True)
class ResumeJob:
    """Every approval of the session's round (``version``) has a decision: resume the agent with them."""

    session_id: str
    version: int

    kind = JobKind.RESUME

    def fields(self) -> dict[str, str]:
        """The stream entry's fields (with the trace of the decision, when one is recorded)."""
        return {"kind": self.kind, "session_id": self.session_id, "version": str(self.version), **_trace_field()}


def _trace_field() -> dict[str, str]:
    """The current span's ``traceparent``, so that the worker's span for the job continues the trace."""
    traceparent = current_traceparent()
    return {TRACE_FIELD: traceparent} if traceparent else {}


JobRecord = StartJob | ResumeJob
_FIELDS_NEEDED: Final = {
    JobKind.START: tuple(field.name for field in dataclasses.fields(StartJob)),
    JobKind.RESUME: tuple(field.name for field in dataclasses.fields(ResumeJob)),
}


@dataclass(frozen=True)
class Job:
    """One delivery of a job.

    Attributes:
        job_id: ``<shard>/<stream entry id>``: unique across shards.
        fields: The job's fields (``kind``, ``session_id``, ...).
        deliveries: How many times it was delivered (1 on the first).
        unreadable: Why the stored fields could not be read as they are ("" when they could).
    """

    job_id: str
    fields: dict[str, str]
    deliveries: int = 1
    unreadable: str = ""

    @property
    def shard(self) -> int:
        """The shard whose stream holds the job."""
        return int(self.job_id.partition("/")[0])

    @property
    def entry_id(self) -> str:
        """The job's id in its shard's stream."""
        return self.job_id.partition("/")[2]

    @property
    def kind(self) -> str:
        """``start`` or ``resume`` (``JobKind``), or what an unreadable job says."""
        return self.fields.get("kind", "")

    @property
    def traceparent(self) -> str:
        """The trace the job continues ("" for none, or a malformed one)."""
        return valid_traceparent(self.fields.get(TRACE_FIELD))

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
        self._streams_apart = isinstance(client, RedisCluster)  # one XREADGROUP cannot span the masters
        self.rests = ShardRests()  # a cluster's master in trouble: its shard is skipped a moment
        self._holds = JobHolds()
        self._next_blocking = 0
        self._redeliver = client.register_script(scripts.REDELIVER_JOB.text)
        self._prune = client.register_script(scripts.PRUNE_CONSUMERS.text)
        self._leave = client.register_script(scripts.LEAVE_GROUP.text)

    def ensure_group(self) -> None:
        """Create every shard's stream and consumer group if they do not exist yet."""
        for shard in keys.shards():
            self._ensure_group_of(shard)

    def _ensure_group_of(self, shard: int) -> bool:
        """Whether the shard's group had to be made."""
        try:
            self._client.xgroup_create(keys.jobs(shard), keys.JOBS_GROUP, id="0", mkstream=True)
        except redis.ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise
            return False
        return True

    def _make_lost_groups(self, shards: list[int]) -> list[int]:
        """NOGROUP on a read of ``shards`` (a failover lost a group): make the missing ones again; return whose."""
        made = [shard for shard in shards if self._ensure_group_of(shard)]
        logger.warning("shards=<%s> | the job group is gone (a failover lost it): made again", made)
        return made

    def enqueue(self, job: JobRecord, *, pipeline: redis.client.Pipeline | None = None) -> None:
        """Queue a job on its session's shard (inside the caller's transaction, if given)."""
        target = pipeline if pipeline is not None else self._client
        stream = keys.jobs(keys.shard_of(job.session_id))
        target.xadd(stream, job.fields(), maxlen=_MAX_JOBS, approximate=True)  # type: ignore[arg-type]

    @staticmethod
    def script_resume(session_id: str) -> scripts.ScriptRecord:
        """The resume job for a script to queue (``bot.store.scripts``).

        The stream's bound and the job's fields but its version, which only the script knows (the round's) and appends.
        """
        fields = ResumeJob(session_id, 0).fields()
        del fields["version"]
        return (str(_MAX_JOBS), *(item for pair in fields.items() for item in pair), "version")

    def read(self, consumer: str, *, block_ms: int = 1000, count: int = 1) -> list[Job]:
        """New jobs for ``consumer`` from any shard: up to ``count`` per shard.

        Blocks up to ``block_ms`` (at most ``BLOCKING_WAIT_MAX_S``) on one server; on a cluster up to
        ``CLUSTER_WAIT_MS`` (then the caller reads again). After a read whose reply may be lost (it failed, or the
        client retried it), the shard's first read is of what that read handed over (``_lost_jobs``): this consumer's
        own pending jobs, less those it holds. A shard whose group is gone (NOGROUP: a failover lost it) gets it back.
        """
        block_ms = min(block_ms, int(BLOCKING_WAIT_MAX_S * 1000))
        if not self._streams_apart:
            return self._read(consumer, list(keys.shards()), count=count, block_ms=block_ms)
        # Each master on its own: a pipeline fails whole when one does, and the jobs the others handed over would
        # wait, this consumer's, until another worker claimed them as stale.
        jobs = [
            job
            for read in self._each_shard(
                lambda shard: self._read(consumer, [shard], count=count, block_ms=None), what=_READ, missing=[]
            )
            for job in read
        ]
        if jobs:
            return jobs
        # Nothing anywhere: wait on one shard, a different one each time, briefly, so a job on another
        # shard waits little (the caller reads again at once). On its own thread: a master that went silent
        # holds its own reply, not this loop (its answer, if any, is the next read's).
        shard = self._next_blocking = (self._next_blocking + 1) % len(keys.shards())
        wait_ms = min(block_ms, CLUSTER_WAIT_MS)
        return cast(
            list[Job],
            one_shard(
                len(keys.shards()),
                shard,
                lambda at: self._read(consumer, [at], count=count, block_ms=wait_ms),
                self.rests,
                what=_READ,
                missing=[],
                within_s=wait_ms / 1000 + LAGGARD_S,
            ),
        )

    def reads_owed(self) -> bool:
        """Whether a shard's read of new jobs answered too late for its own call: its jobs are the next read's."""
        return self.rests.owed(_READ)

    def _each_shard(self, read: Callable[[int], Any], *, what: str, missing: Any = None) -> list[Any]:
        """``read(shard)`` of each shard on its own (``each_shard``); a resting or failing one's as ``missing``."""
        return each_shard(len(keys.shards()), read, self.rests, what=what, missing=missing)

    def _read(self, consumer: str, shards: list[int], *, count: int, block_ms: int | None) -> list[Job]:
        """New jobs of ``shards`` (one command); first, of those whose last read may have lost its reply, the lost."""
        unsure = self._holds.unsure(consumer, shards)
        if unsure:
            lost = self._lost_jobs(consumer, unsure, count=count)
            if lost:
                return lost
        streams = {keys.jobs(shard): ">" for shard in shards}
        try:
            response: Any = self._unsure_if_lost(
                consumer,
                shards,
                lambda: self._client.xreadgroup(keys.JOBS_GROUP, consumer, streams, count=count, block=block_ms),  # type: ignore[arg-type]
            )
        except redis.ResponseError as error:
            if "NOGROUP" not in str(error):
                raise
            self._make_lost_groups(shards)
            return []
        return self._holds.hand_over(consumer, _jobs_of(response))  # up to count per stream

    def _unsure_if_lost(self, consumer: str, shards: list[int], take: Callable[[], Any]) -> Any:
        """``take()``, a read or claim of jobs for ``consumer``; ``shards`` marked unsure when its reply may be lost.

        Its jobs are this consumer's then, read from its history by the shard's next read. A reply may be lost when the
        call raised a connection error or timeout, when an attempt of it failed (retried, or given up after: the
        cluster client's layout refresh then reached no node, ``bot.store.cluster_client.ClusterUnreachable``), or when
        it took ``RETRIED_AFTER_S``.
        """
        started, failed = time.monotonic(), failed_attempts.here()
        try:
            answer = take()
        except (redis.RedisError, RedisClusterException) as error:
            if isinstance(error, redis.ConnectionError | redis.TimeoutError) or failed_attempts.here() > failed:
                self._holds.mark_unsure(consumer, shards)
            raise
        if failed_attempts.here() > failed or time.monotonic() - started >= RETRIED_AFTER_S:
            self._holds.mark_unsure(consumer, shards)  # an attempt was sent again: the first one's reply may be lost
        return answer

    def _lost_jobs(self, consumer: str, shards: list[int], *, count: int) -> list[Job]:
        """The jobs that reads whose reply was lost handed ``consumer``: its own history, less what it holds.

        A shard whose group is gone (NOGROUP) gets it back, with no history to read: it is sure again, never failing
        every later read.
        """
        most = count + self._holds.most_held(consumer, shards)
        history = {keys.jobs(shard): "0" for shard in shards}  # id 0: this consumer's pending entries, not new ones
        try:
            response: Any = self._client.xreadgroup(keys.JOBS_GROUP, consumer, history, count=most)  # type: ignore[arg-type]
        except redis.ResponseError as error:
            if "NOGROUP" not in str(error):
                raise
            # The shards whose group existed keep their history for the next read.
            self._holds.mark_sure(consumer, self._make_lost_groups(shards))
            return []
        self._holds.mark_sure(consumer, shards)
        return self._holds.hand_over(consumer, _jobs_of(response))

    def claim_stale(self, consumer: str, *, min_idle_ms: int, count: int = 10) -> list[Job]:
        """Take over jobs another consumer has held for ``min_idle_ms`` without acknowledging them.

        Up to ``count`` per shard.
        """

        def look(shard: int) -> list[Job]:
            # Handed over on the shard's thread: a late answer's jobs are held before another read can find them.
            stream = keys.jobs(shard)
            claimed = self._unsure_if_lost(
                consumer,
                [shard],
                lambda: self._client.xautoclaim(stream, keys.JOBS_GROUP, consumer, min_idle_ms, "0-0", count=count),
            )
            return self._claimed(consumer, shard, claimed)

        if self._streams_apart:
            found = self._each_shard(look, what="the job stream's claim", missing=[])
        else:
            looks = self._client.pipeline(transaction=False)  # one round trip
            for shard in keys.shards():
                looks.xautoclaim(keys.jobs(shard), keys.JOBS_GROUP, consumer, min_idle_ms, "0-0", count=count)
            answers = self._unsure_if_lost(consumer, list(keys.shards()), looks.execute)
            found = [self._claimed(consumer, *pair) for pair in zip(keys.shards(), answers, strict=True)]
        return [job for jobs in found for job in jobs]

    def _claimed(self, consumer: str, shard: int, response: Any) -> list[Job]:
        """The jobs of ``shard``'s XAUTOCLAIM reply, handed over to ``consumer``."""
        jobs = []
        for entry_id, fields in response[1] if response else ():
            if fields is None:  # deleted while pending
                continue
            deliveries = self._deliveries(shard, as_text(entry_id))
            jobs.append(_job(shard, entry_id, fields, deliveries=deliveries))
        return self._holds.hand_over(consumer, jobs)

    def redeliver(self, job: Job, consumer: str, *, count: bool = True) -> Job | None:
        """``job`` again for ``consumer``, if it still holds it (``None``: taken over or gone).

        ``count=False`` does not count a delivery (the step never reached the agent: Redis was down).
        """
        spec = scripts.REDELIVER_JOB
        reply: Any = self._redeliver(
            keys=spec.key_list(stream_key=keys.jobs(job.shard)),
            args=spec.arg_list(
                group=keys.JOBS_GROUP, consumer=consumer, job_id=job.entry_id, mode="count" if count else "keep"
            ),
        )
        if not reply:
            self._holds.let_go(job, consumer)  # another consumer took it over: it is theirs now
            return None
        flat, deliveries = reply
        fields = dict(zip(flat[::2], flat[1::2], strict=True))
        return _job(job.shard, job.entry_id, fields, deliveries=int(deliveries))

    def hand_back(self, job: Job, consumer: str, *, idle_ms: int) -> None:
        """Make ``job`` look abandoned at once, so that the next worker claims it without waiting."""
        stream = keys.jobs(job.shard)
        try:
            self._client.xclaim(stream, keys.JOBS_GROUP, consumer, 0, [job.entry_id], idle=idle_ms, justid=True)
        finally:
            self._holds.let_go(job, consumer)  # handed back, or left to the claim time

    def let_go(self, job: Job, consumer: str) -> None:
        """``consumer`` no longer runs ``job`` (its handler escaped): a claim after the claim time hands it again."""
        self._holds.let_go(job, consumer)

    def prune_consumers(self, *, keep: str, idle_ms: int) -> int:
        """Remove consumers (dead workers) with nothing pending, idle over ``idle_ms``; return how many."""
        spec = scripts.PRUNE_CONSUMERS
        arguments = spec.arg_list(group=keys.JOBS_GROUP, idle_ms=idle_ms, keep=keep)
        removed = [
            int(self._prune(keys=spec.key_list(stream_key=keys.jobs(shard)), args=arguments)) for shard in keys.shards()
        ]
        return max(removed)  # a worker is a consumer of every shard's group: count it once

    def leave(self, consumer: str) -> bool:
        """Remove ``consumer`` from every group unless it still holds jobs; return whether it is gone."""
        spec = scripts.LEAVE_GROUP
        arguments = spec.arg_list(group=keys.JOBS_GROUP, leaving=consumer)
        left = [
            bool(self._leave(keys=spec.key_list(stream_key=keys.jobs(shard)), args=arguments))
            for shard in keys.shards()
        ]
        return all(left)

    def consumers(self) -> list[str]:
        """Names of the consumers of any shard's group."""
        names: dict[str, None] = {}
        for shard in keys.shards():
            for info in self._client.xinfo_consumers(keys.jobs(shard), keys.JOBS_GROUP):
                names[as_text(info["name"])] = None
        return list(names)

    def first_notice(self, job: Job) -> bool:
        """Whether the job's thread has not been told yet that it is delayed (and mark it told)."""
        return bool(self._client.set(keys.job_told(job.shard, job.entry_id), "1", nx=True, ex=_TOLD_SECONDS))

    def touch(self, jobs: Sequence[Job], consumer: str) -> None:
        """Reset the jobs' idle time, one command per shard (running jobs must not look abandoned to other workers)."""
        by_shard: dict[int, list[Any]] = {}
        for job in jobs:
            by_shard.setdefault(job.shard, []).append(job.entry_id)
        for shard, entry_ids in by_shard.items():
            self._client.xclaim(keys.jobs(shard), keys.JOBS_GROUP, consumer, 0, entry_ids, justid=True)

    def ack(self, job: Job) -> None:
        """The job is done: acknowledge and delete it."""
        stream = keys.jobs(job.shard)
        pipeline = self._client.pipeline(transaction=True)
        pipeline.xack(stream, keys.JOBS_GROUP, job.entry_id)
        pipeline.xdel(stream, job.entry_id)
        done = False
        try:
            pipeline.execute()
            done = True
        finally:
            # Done: never handed over again (a reply read before the ack may name it). A failed ack leaves the job
            # pending: another delivery runs it again.
            self._holds.let_go(job, acked=done)

    def pending_count(self) -> int:
        """Jobs delivered but not acknowledged, on every shard."""
        return sum(int(self._client.xpending(keys.jobs(shard), keys.JOBS_GROUP)["pending"]) for shard in keys.shards())

    def _deliveries(self, shard: int, entry_id: str) -> int:
        details = self._client.xpending_range(keys.jobs(shard), keys.JOBS_GROUP, entry_id, entry_id, 1)
        return int(details[0]["times_delivered"]) if details else 1


def _jobs_of(response: Any) -> list[Job]:
    """The jobs of an XREADGROUP reply (any number of streams)."""
    jobs: list[Job] = []
    for stream, entries in response or []:
        shard = _shard_of_stream(as_text(stream))
        # A history read also lists entries deleted while pending (no fields): nothing to run.
        jobs.extend(_job(shard, entry_id, fields) for entry_id, fields in entries if fields is not None)
    return jobs


def _shard_of_stream(stream: str) -> int:
    return next(shard for shard in keys.shards() if keys.jobs(shard) == stream)


def _job(shard: int, entry_id: bytes | str, fields: dict[Any, Any], *, deliveries: int = 1) -> Job:
    job_id = f"{shard}/{as_text(entry_id)}"
    try:
        return Job(job_id, {as_text(key): as_text(value) for key, value in fields.items()}, deliveries)
    except UnicodeDecodeError as error:
        readable = {shown(key): shown(value) for key, value in fields.items()}
        return Job(job_id, readable, deliveries, unreadable=f"fields are not UTF-8: {error}")


def now_ms() -> int:
    """Wall-clock milliseconds (job timestamps)."""
    return int(time.time() * 1000)
