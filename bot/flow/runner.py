"""Runs agent jobs: start a session from a request, resume it from a round's decisions, publish.

Publishing an outcome is one Redis transaction: either a new approval round (requests, open
set, outbox posts) or the agent's reply (an outbox post), together with the ``published`` mark.
A job delivered twice is harmless:

- start: the prompt's id is remembered in the agent's state, so a redelivered start continues
  the run instead of appending the prompt again;
- resume: a job for a version the session already left is dropped; a run that died half way
  (tools done, outcome not posted) is finished and posted, and completed tools never re-run.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, Protocol

import redis

from agent import AgentResult
from agent.approval import RESPONSE_SHAPES, ResponseShape, shape_response
from agent.attempts import is_rerun_interrupt
from agent.guarded import guarded_calls
from bot.domain.clock import Clock, system_clock
from bot.domain.policy import PolicyBook
from bot.domain.records import ApprovalRequest, GuardedCall, approval_id_for, session_id_for
from bot.flow.agent_adapters import Runnable, as_runnable
from bot.flow.escalation import Schedule
from bot.render import blocks, messages
from bot.render.bounded import bounded_json
from bot.store import keys
from bot.store.approvals import Approval, ApprovalStore
from bot.store.audit import Audit
from bot.store.jobs import Job, JobQueue, ResumeJob, StartJob
from bot.store.outbox import Outbox, post_approval, post_message, posts_in_order
from bot.store.threads import ThreadInfo, Threads
from state.errors import UnstorableValueError
from state.interrupt import Interrupt
from state.shapes import Message, ToolUse
from state.store import SessionStore

logger = logging.getLogger(__name__)

AgentFactory = Callable[..., Any]
"""``factory(session_id=..., store=...) -> agent.Agent | strands.Agent``: builds the agent of one session."""

_PROMPT_IDS: Final = "signoff_prompt_ids"
_PROMPT_IDS_KEPT: Final = 50


class ExternalRounds(Protocol):
    """Sessions whose round was asked from outside an agent (the HTTP API): nothing to resume, a client to tell."""

    def owns(self, session_id: str) -> bool:
        """Whether the session is one of them."""

    def finish(self, session_id: str, version: int) -> None:
        """Its round is decided: tell whoever asked (raise to have the job retried)."""


class AgentCodeError(Exception):
    """The agent's code failed on the responses it was resumed with; retrying cannot help.

    Attributes:
        error: What the agent raised.
        shapes: The response shapes it received (one per approval of the round).
    """

    def __init__(self, error: Exception, shapes: list[ResponseShape]) -> None:
        """Keep the error and the shapes for the thread's message."""
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error
        self.shapes = shapes


class SessionRunner:
    """Handles one job at a time; any number of runners may share Redis."""

    def __init__(
        self,
        *,
        client: redis.Redis,
        store: SessionStore,
        approvals: ApprovalStore,
        outbox: Outbox,
        jobs: JobQueue,
        agent_factory: AgentFactory,
        policies: PolicyBook,
        schedule: Schedule,
        audit: Audit,
        retention_s: int = 30 * 86_400,
        clock: Clock = system_clock,
        external: ExternalRounds | None = None,
    ) -> None:
        """Keep the collaborators (``external``: the sessions the HTTP API opened, finished instead of resumed)."""
        self._client = client
        self._store = store
        self._approvals = approvals
        self._outbox = outbox
        self._jobs = jobs
        self._threads = Threads(client)
        self._factory = agent_factory
        self._policies = policies
        self._schedule = schedule
        self._audit = audit
        self._retention_s = retention_s
        self._clock = clock
        self._external = external

    def handle(self, job: Job) -> None:
        """Run one job to its published outcome.

        Raises:
            Whatever the agent or Redis raised: the job stays pending and is retried.
        """
        record = job.record()
        if isinstance(record, StartJob):
            self._start(record)
        elif self._external is not None and self._external.owns(record.session_id):
            self._external.finish(record.session_id, record.version)
        else:
            self._resume(record.session_id, record.version)

    def report_failure(self, job: Job, text: str) -> None:
        """Tell the job's thread that it failed for good."""
        record = job.record()
        info = _thread_of(record) if isinstance(record, StartJob) else self._thread_info(record.session_id)
        self._post(info, text=text)

    def _start(self, job: StartJob) -> None:
        info = _thread_of(job)
        session_id = session_id_for(info.team_id, info.channel_id, info.thread_ts)
        agent = as_runnable(self._factory(session_id=session_id, store=self._store))
        if agent.interrupted:
            self._while_interrupted(session_id, info, agent)
            return
        prompt_id = job.prompt_id
        seen: list[str] = list(agent.state.get(_PROMPT_IDS) or [])
        if prompt_id in seen:
            # Redelivered (a worker died or the job was retried): finish, never answer twice.
            if self._published_version(session_id) >= self._store.version(session_id):
                return
            if agent.messages and _is_final_answer(agent.messages[-1]):
                result = AgentResult("end_turn", agent.messages[-1])
            else:
                result = agent()
        else:
            # Accepted: from now on this person is the thread's requester (self-approval is judged against them).
            self._threads.remember(session_id, info)
            agent.state.set(_PROMPT_IDS, [*seen, prompt_id][-_PROMPT_IDS_KEPT:])
            result = agent(job.text)
        self._publish(session_id, info, agent, result)

    def _while_interrupted(self, session_id: str, info: ThreadInfo, agent: Runnable) -> None:
        """A request arrived while the agent waits: recover what a crash left unpublished, else say so."""
        unpublished = self._unpublished(session_id, agent)
        if unpublished:
            # The agent stopped, but its approvals were never posted (a crash before publishing).
            self._publish(
                session_id,
                self._thread_info(session_id, fallback=info),
                agent,
                AgentResult("interrupt", None, unpublished),
            )
            return
        round_version, approvals = self._approvals.round_approvals(session_id)
        if approvals and all(approval.decision is not None for approval in approvals):
            # Every approval is decided but the resume never completed (it was given up): try again.
            self._jobs_queue_resume(session_id, round_version)
            return
        self._post(info, text=messages.session_busy())

    def _resume(self, session_id: str, version: int) -> None:
        round_version, approvals = self._approvals.round_approvals(session_id)
        if round_version != version or self._published_version(session_id) > version:
            logger.info("session_id=<%s>, version=<%d> | round already resumed, job dropped", session_id, version)
            return
        info = self._thread_info(session_id)
        agent = as_runnable(self._factory(session_id=session_id, store=self._store))
        unpublished = self._unpublished(session_id, agent, approvals)
        if agent.interrupted and unpublished:
            # A worker resumed this round, the agent stopped again, and the worker died before posting.
            result = AgentResult("interrupt", None, unpublished)
        elif agent.interrupted:
            # Also right after a worker died mid-resume: the answers are recorded again (same
            # values) and the pending batch continues; completed tools are not run again.
            responses = [
                {
                    "interruptResponse": {
                        "interruptId": approval.request.interrupt_id,
                        "response": shape_response(approval.decision, approval.request.response_shape),
                    }
                }
                for approval in approvals
                if approval.decision is not None
            ]
            try:
                result = agent(responses)
            except Exception as error:
                cause = _code_error_in(error)
                if cause is None:
                    raise
                # The agent's own code choked on the response: a retry would fail the same way.
                raise AgentCodeError(cause, [approval.request.response_shape for approval in approvals]) from error
            self._audit.record("resume", session_id=session_id, version=version, answers=len(responses))
        elif agent.messages and _is_final_answer(agent.messages[-1]):
            result = AgentResult("end_turn", agent.messages[-1])  # finished, but died before posting
        else:
            result = agent()  # died between batches: carry on
        self._publish(session_id, info, agent, result)

    def publish_request(
        self, session_id: str, info: ThreadInfo, interrupt: Interrupt, call: ToolUse, *, client: str
    ) -> None:
        """Publish a round of one approval asked from outside an agent (the HTTP API), as an agent's round is.

        The interrupt guards ``call`` (its id names the call's toolUseId), so the request, its policy,
        schedule, audit and message are exactly those of an agent stopped before that call; ``client``
        names who asked. Publishing the same request again opens nothing new.
        """
        self._threads.remember(session_id, info)
        result = AgentResult("interrupt", None, [interrupt])
        self._publish(session_id, info, _WaitingCall(call), result, client=client)

    def _publish(
        self,
        session_id: str,
        info: ThreadInfo,
        agent: "_PendingCalls",
        result: AgentResult,
        *,
        client: str | None = None,
    ) -> None:
        version = self._store.version(session_id)
        transaction = self._client.pipeline(transaction=True)
        if self._round_version(session_id) != version:
            # The previous round is over (its outcome is what we publish): keep it for the retention period only.
            self._approvals.expire_round(transaction, session_id, after_s=self._retention_s)
        if result.stop_reason == "interrupt":
            waiting = agent.pending_tool_uses
            requests = [
                self._request(session_id, version, info, interrupt, waiting, client=client)
                for interrupt in result.interrupts
            ]
            opened = self._approvals.open_round(
                session_id=session_id, version=version, requests=requests, pipeline=transaction
            )
            for request in opened:
                self._schedule.plan(transaction, request)
                self._audit.add(
                    transaction,
                    "request",
                    session_id=session_id,
                    actor=request.requested_by,
                    approval_id=request.approval_id,
                    tool=request.tool,
                    interrupt=request.interrupt_name,
                    policy=request.policy.name,
                )
            for request in opened:
                self._outbox.add(transaction, post_approval(session_id, request.approval_id))
        else:
            reply = str(result) or f"(stopped: {result.stop_reason})"
            # The model's words are escaped: an answer (or a tool's output it repeats) cannot ping @channel.
            # A long answer is several messages (Slack's limits), posted in order.
            where = {"channel": info.channel_id, "thread_ts": info.thread_ts}
            parts = [{**where, **message} for message in blocks.agent_reply_messages(reply)]
            for entry in posts_in_order(parts, session_id=session_id):
                self._outbox.add(transaction, entry)
        transaction.hset(keys.round_(session_id), "published", version)
        # Approvals are waiting: the thread's records must not expire.
        expire_after_s = None if result.stop_reason == "interrupt" else self._retention_s
        if expire_after_s is None:
            transaction.persist(keys.round_(session_id))
        else:
            transaction.expire(keys.round_(session_id), expire_after_s)
        self._threads.keep(transaction, session_id, expire_after_s=expire_after_s)
        transaction.execute()

    def _request(
        self,
        session_id: str,
        version: int,
        info: ThreadInfo,
        interrupt: Interrupt,
        waiting: list[ToolUse],
        *,
        client: str | None = None,
    ) -> ApprovalRequest:
        # The call comes from the interrupt's id and the agent's pending batch, never from the
        # reason: whoever raised the interrupt, the tool's rules apply to the tool that waits.
        calls = tuple(
            GuardedCall(tool=call["name"], input=bounded_json(call["input"]), tool_use_id=call["toolUseId"])
            for call in guarded_calls(interrupt.id, waiting)
        )
        single = calls[0] if len(calls) == 1 else None
        policy = self._policies.for_call(
            tool=single.tool if single else None,
            interrupt_name=interrupt.name,
            batch=[call.tool for call in calls],
        ).summary()
        if is_rerun_interrupt(interrupt.name) and policy.expiry_outcome == "approve":
            # The call may have run already: nobody answering must never run it again.
            policy = policy.model_copy(update={"expiry_outcome": "deny"})
        now = self._clock()
        keeps_pending = policy.expiry_outcome == "keep"
        expires_at = (
            now + timedelta(seconds=policy.expire_after_s) if policy.expire_after_s and not keeps_pending else None
        )
        return ApprovalRequest(
            approval_id=keys.approval_id(session_id, approval_id_for(session_id, version, interrupt.id)),
            session_id=session_id,
            interrupt_id=interrupt.id,
            interrupt_name=interrupt.name,
            team_id=info.team_id,
            channel_id=info.channel_id,
            thread_ts=info.thread_ts,
            requested_by=info.requested_by,
            client=client,
            tool=single.tool if single else None,
            tool_input=single.input if single else None,
            tool_use_id=single.tool_use_id if single else None,
            calls=calls,
            reason=bounded_json(interrupt.reason),  # stored and shown: never deeper or longer than a record can hold
            policy=policy,
            response_shape=_asked_shape(interrupt.reason) or policy.response,
            created_at=now,
            expires_at=expires_at,
        )

    def _thread_info(self, session_id: str, *, fallback: ThreadInfo | None = None) -> ThreadInfo:
        info = self._threads.get(session_id) or fallback
        if info is None:
            raise KeyError(f"session_id=<{session_id}> | no thread recorded")
        return info

    def _unpublished(
        self, session_id: str, agent: Runnable, approvals: list[Approval] | None = None
    ) -> list[Interrupt]:
        """The interrupts the agent waits on that the stored round (``approvals``, read if not given) does not hold.

        Compared by approval id, which names the round (the session's version) as well as the
        interrupt: an agent stopped again on a reused interrupt id is a new round, never the
        stored one (whose decisions would otherwise answer it).
        """
        waiting = agent.pending_interrupts
        if not waiting:
            return []
        version = self._store.version(session_id)
        if approvals is None:
            _round_version, approvals = self._approvals.round_approvals(session_id)
        published = {approval.request.approval_id for approval in approvals}
        return [
            interrupt
            for interrupt in waiting
            if keys.approval_id(session_id, approval_id_for(session_id, version, interrupt.id)) not in published
        ]

    def _jobs_queue_resume(self, session_id: str, version: int) -> None:
        self._jobs.enqueue(ResumeJob(session_id, version))
        self._audit.record("resume_requeued", session_id=session_id, version=version)

    def _round_version(self, session_id: str) -> int:
        value = self._client.hget(keys.round_(session_id), "version")
        return int(value) if value is not None else 0

    def _published_version(self, session_id: str) -> int:
        value = self._client.hget(keys.round_(session_id), "published")
        return int(value) if value is not None else 0

    def _post(self, info: ThreadInfo, *, text: str) -> None:
        session_id = session_id_for(info.team_id, info.channel_id, info.thread_ts)  # with the thread's other posts
        self._outbox.send_later(post_message(info.channel_id, text, thread_ts=info.thread_ts, session_id=session_id))


class _PendingCalls(Protocol):
    """What publishing reads from an agent: the calls its interrupts guard."""

    @property
    def pending_tool_uses(self) -> list[ToolUse]:
        """The calls of the interrupted batch without a result yet."""


@dataclass(frozen=True)
class _WaitingCall:
    """The one call a request asked through the API waits on, as ``_publish`` reads it from an agent."""

    call: ToolUse

    @property
    def pending_tool_uses(self) -> list[ToolUse]:
        return [self.call]


def _code_error_in(error: BaseException) -> Exception | None:
    """The ``TypeError``/``AttributeError`` behind ``error`` (Strands wraps it in its own exception), if any."""
    seen: BaseException | None = error
    for _ in range(5):
        if isinstance(seen, UnstorableValueError):
            return None  # the agent produced a value no record can hold; the worker reports that itself
        if isinstance(seen, TypeError | AttributeError):
            return seen
        if seen is None:
            return None
        seen = seen.__cause__
    return None


def _asked_shape(reason: Any) -> ResponseShape | None:
    """The response shape the raiser asked for with its reason's ``"response"`` key, if any."""
    shape = reason.get("response") if isinstance(reason, dict) else None
    return shape if shape in RESPONSE_SHAPES else None


def _is_final_answer(message: Message) -> bool:
    return message["role"] == "assistant" and not any("toolUse" in block for block in message["content"])


def _thread_of(job: StartJob) -> ThreadInfo:
    return ThreadInfo(job.team_id, job.channel_id, job.thread_ts, job.user_id)
