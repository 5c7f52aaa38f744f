"""Runs agent jobs: start a session from a request, resume it from a round's decisions.

Its outcome is published by ``bot.flow.publish`` (one transaction, with the ``published`` mark).

A job delivered twice is harmless:

- start: the prompt's id is remembered in the agent's state, so a redelivered start continues
  the run instead of appending the prompt again;
- resume: a job for a version the session already left is dropped; a run that died half way
  (tools done, outcome not posted) is finished and posted, and completed tools never re-run.
"""

import logging
from collections.abc import Callable
from typing import Any, Final, Protocol

from agent import AgentResult
from agent.approval import AnswerShape, refusal_text, shape_response
from bot.domain.api_requests import is_api_session
from bot.domain.errors import SignoffError
from bot.domain.records import approval_id_for, session_id_for
from bot.domain.trusts import Trust
from bot.flow.agent_abilities import ExplainsRefusals, TrustsTools
from bot.flow.agent_adapters import Runnable, as_runnable
from bot.flow.publish import RoundPublisher
from bot.render.texts import thread_posts
from bot.store import keys
from bot.store.access.trusts import TrustStore
from bot.store.approvals.approval_record import Approval
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.threads import ThreadInfo, Threads
from bot.store.audit import Audit
from bot.store.queues.jobs import Job, JobQueue, ResumeJob, StartJob
from bot.store.queues.outbox import Outbox, post_message
from state.errors import UnstorableValueError
from state.interrupt import Interrupt
from state.shapes import Message
from state.store import SessionStore

logger = logging.getLogger(__name__)

AgentFactory = Callable[..., Any]
"""``factory(session_id=..., store=...)``: builds the agent of one session: an ``agent.Agent``, a
``strands.Agent``, or a Strands ``Swarm`` or ``Graph`` (``bot.flow.agent_adapters.as_runnable``)."""

_PROMPT_IDS: Final = "signoff_prompt_ids"
_PROMPT_IDS_KEPT: Final = 50


class ExternalRounds(Protocol):
    """Sessions whose round was asked from outside an agent (the HTTP API): nothing to resume, a client to tell."""

    def owns(self, session_id: str) -> bool:
        """Whether the session is one of them."""

    def finish(self, session_id: str, version: int) -> None:
        """Its round is decided: tell whoever asked (raise to have the job retried)."""


class AgentSetupError(SignoffError):
    """The agent cannot be built or started as written (``AGENT_FACTORY``'s code, or the agent's); retrying cannot help.

    Attributes:
        error: What the factory or the agent raised (a ``TypeError``, a missing method...).
    """

    def __init__(self, error: Exception) -> None:
        """Keep the error for the thread's message and the operator's log."""
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error


class AgentCodeError(SignoffError):
    """The agent's code failed on the responses it was resumed with; retrying cannot help.

    Attributes:
        error: What the agent raised.
        shapes: The response shapes it received (one per approval of the round).
    """

    def __init__(self, error: Exception, shapes: list[AnswerShape]) -> None:
        """Keep the error and the shapes for the thread's message."""
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error
        self.shapes = shapes


class SessionRunner:
    """Handles one job at a time; any number of runners may share Redis."""

    def __init__(
        self,
        *,
        sessions: SessionStore,
        approvals: ApprovalStore,
        threads: Threads,
        trusts: TrustStore,
        jobs: JobQueue,
        outbox: Outbox,
        audit: Audit,
        agent_factory: AgentFactory,
        publisher: RoundPublisher,
        external: ExternalRounds | None = None,
    ) -> None:
        """Keep the collaborators (``external``: the sessions the HTTP API opened, finished instead of resumed)."""
        self._sessions, self._approvals, self._threads, self._trusts = sessions, approvals, threads, trusts
        self._jobs, self._outbox, self._audit = jobs, outbox, audit
        self._factory = agent_factory
        self._publisher = publisher
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
        if not isinstance(record, StartJob) and is_api_session(record.session_id):
            # No agent behind it: what failed is the client's callback, which nobody in Slack can fix.
            logger.warning("session_id=<%s> | %s", record.session_id, text)
            return
        info = _thread_of(record) if isinstance(record, StartJob) else self._thread_info(record.session_id)
        self._post(info, text=text)

    def _start(self, job: StartJob) -> None:
        info = _thread_of(job)
        session_id = session_id_for(info.team_id, info.channel_id, info.thread_ts)
        agent = self._agent(session_id, requester=info.requested_by)
        if agent.interrupted:
            self._while_interrupted(session_id, info, agent)
            return
        prompt_id = job.prompt_id
        seen: list[str] = list(agent.state.get(_PROMPT_IDS) or [])
        if prompt_id in seen:
            # Redelivered (a worker died or the job was retried): finish, never answer twice.
            if self._approvals.round_marks(session_id)[1] >= self._sessions.version(session_id):
                return
            if agent.messages and _is_final_answer(agent.messages[-1]):
                result = AgentResult("end_turn", agent.messages[-1])
            else:
                result = _run(agent)
        else:
            # Accepted: from now on this person is the thread's requester (self-approval is judged against them).
            self._threads.remember(session_id, info)
            agent.state.set(_PROMPT_IDS, [*seen, prompt_id][-_PROMPT_IDS_KEPT:])
            result = _run(agent, job.text)
        self._publisher.publish(session_id, info, agent, result)

    def _agent(self, session_id: str, *, requester: str) -> Runnable:
        """The session's agent from ``AGENT_FACTORY``, trusting only the tools trusted on ``requester``'s requests.

        Whoever mentions the bot in a thread becomes its requester: a trust made on another person's request (by
        the approver now asking, say) must not let their calls run unasked.

        Raises:
            AgentSetupError: The factory raised a programming error, or returned something the bot cannot run.
        """
        try:
            agent = as_runnable(self._factory(session_id=session_id, store=self._sessions))
        except Exception as error:  # boundary: the factory is the operator's code; only its own bug is kept
            cause = _code_error_in(error)
            if cause is None:
                raise
            raise AgentSetupError(cause) from error
        if isinstance(agent, TrustsTools):
            # A trust revoked since the agent last ran ends before it runs again (the agent keeps its own list).
            agent.keep_trusted(self._trusts.tools(session_id, requester=requester))
        return agent

    def _while_interrupted(self, session_id: str, info: ThreadInfo, agent: Runnable) -> None:
        """A request arrived while the agent waits: recover what a crash left unpublished, else say so."""
        unpublished = self._unpublished(session_id, agent)
        if unpublished:
            # The agent stopped, but its approvals were never posted (a crash before publishing).
            self._publisher.publish(
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
        self._post(info, text=thread_posts.session_busy())

    def _resume(self, session_id: str, version: int) -> None:
        round_version, approvals = self._approvals.round_approvals(session_id)
        if round_version != version or self._approvals.round_marks(session_id)[1] > version:
            logger.info("session_id=<%s>, version=<%d> | round already resumed, job dropped", session_id, version)
            return
        info = self._thread_info(session_id)
        self._record_trusts(approvals)  # before the agent is built: it keeps only the trusts Signoff holds
        agent = self._agent(session_id, requester=info.requested_by)
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
            if isinstance(agent, ExplainsRefusals):
                agent.explain_refusals(_refusals(approvals))
            try:
                result = agent(responses)
            except Exception as error:  # boundary: the agent's code may raise anything; only its own bug is kept
                cause = _code_error_in(error)
                if cause is None:
                    raise
                # The agent's own code choked on the response: a retry would fail the same way.
                raise AgentCodeError(cause, [approval.request.response_shape for approval in approvals]) from error
            self._audit.record("resume", session_id=session_id, version=version, answers=len(responses))
        elif agent.messages and _is_final_answer(agent.messages[-1]):
            result = AgentResult("end_turn", agent.messages[-1])  # finished, but died before posting
        else:
            result = _run(agent)  # died between batches: carry on
        answered = [approval.decision for approval in approvals if approval.decision is not None]
        self._publisher.publish(session_id, info, agent, result, answered=answered)

    def _record_trusts(self, approvals: list[Approval]) -> None:
        """Keep a record of each tool the round's approvers trusted for the rest of the session (again: harmless)."""
        for approval in approvals:
            decision, request = approval.decision, approval.request
            if decision is None or not decision.trusted or request.tool is None or decision.decided_by is None:
                continue
            trust = Trust(
                session_id=request.session_id,
                tool=request.tool,
                trusted_by=decision.decided_by,
                requester=request.requested_by,
                team_id=request.team_id,
                channel_id=request.channel_id,
                thread_ts=request.thread_ts,
                approval_id=request.approval_id,
                trusted_at=decision.decided_at,
            )
            self._trusts.record(trust)

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
        version = self._sessions.version(session_id)
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

    def _post(self, info: ThreadInfo, *, text: str) -> None:
        session_id = session_id_for(info.team_id, info.channel_id, info.thread_ts)  # with the thread's other posts
        post = post_message(
            info.channel_id, text, team_id=info.team_id, thread_ts=info.thread_ts, session_id=session_id
        )
        self._outbox.send_later(post)


def _refusals(approvals: list[Approval]) -> dict[str, str]:
    """What the model is told of each call refused (denied or expired) in the round, by its toolUseId."""
    return {
        approval.request.tool_use_id: refusal_text(approval.decision)
        for approval in approvals
        if approval.decision is not None
        and approval.decision.decision != "approve"
        and approval.request.tool_use_id is not None
    }


def _run(agent: Runnable, prompt: str | None = None) -> AgentResult:
    """Run ``agent`` on ``prompt`` (or continue it).

    Raises:
        AgentSetupError: The agent's code (or what it is built of) raised a programming error.
    """
    try:
        return agent(prompt)
    except Exception as error:  # boundary: the agent's code may raise anything; only its own bug is kept
        cause = _code_error_in(error)
        if cause is None:
            raise
        raise AgentSetupError(cause) from error


_PROGRAMMING_ERRORS: Final = (TypeError, AttributeError, NotImplementedError, ImportError, NameError)
"""Errors in code, not in the world: the same code raises them again on every retry."""


def _code_error_in(error: BaseException) -> Exception | None:
    """The programming error behind ``error`` (Strands wraps it in its own exception), if any."""
    seen: BaseException | None = error
    for _ in range(5):
        if isinstance(seen, UnstorableValueError):
            return None  # the agent produced a value no record can hold; the worker reports that itself
        if isinstance(seen, _PROGRAMMING_ERRORS):
            return seen
        if seen is None:
            return None
        seen = seen.__cause__
    return None


def _is_final_answer(message: Message) -> bool:
    return message["role"] == "assistant" and not any("toolUse" in block for block in message["content"])


def _thread_of(job: StartJob) -> ThreadInfo:
    return ThreadInfo(job.team_id, job.channel_id, job.thread_ts, job.user_id)
