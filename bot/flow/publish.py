"""Publishing an agent's outcome: a new approval round, or its reply, in one Redis transaction.

A round's requests are built here from the calls each interrupt guards (never from its reason:
whoever raised the interrupt, the tool's rules apply to the tool that waits), the policy those
calls match, and its expiry. The transaction writes them with their schedule, audit records and
outbox posts, and the round's ``published`` mark; each record through its owner.
"""

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Final, Protocol

from redis import Redis

from agent import AgentResult
from agent.approval import RESPONSE_SHAPES, ResponseShape, input_digest
from agent.attempts import is_rerun_interrupt
from agent.guarded import guarded_calls
from agent.vended import AskedQuestion, expected_shape, question_of
from bot.domain.clock import Clock, offset_ms, system_clock
from bot.domain.grants import call_digest, deciders_digest, field_digests, pattern_key
from bot.domain.policy.policy import PolicyBook
from bot.domain.policy.policy_rules import DEFAULT_POLICY_NAME
from bot.domain.question_kinds import QuestionError, asked_question, question_in_words
from bot.domain.records import ApprovalRequest, Decision, GuardedCall, PolicySummary, Question, approval_id_for
from bot.domain.status import Status
from bot.domain.storable_json import bounded_json
from bot.flow.agent_abilities import TrustsTools
from bot.flow.decisions import DecisionService
from bot.observe import metrics
from bot.render import blocks
from bot.store import keys
from bot.store.access.grants import Call, GrantStore, GrantUse
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.threads import ThreadInfo, Threads
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, post_approval, posts_in_order
from bot.store.queues.schedule import Schedule
from bot.store.scripts.decide import TOO_LATE
from state.interrupt import Interrupt
from state.shapes import ToolUse
from state.store import SessionStore
from state.text import as_text

logger = logging.getLogger(__name__)

_SCHEMA_MAX_CHARS: Final = 8_000


class PendingCalls(Protocol):
    """What publishing reads from an agent: the calls its interrupts guard."""

    @property
    def pending_tool_uses(self) -> list[ToolUse]:
        """The calls of the interrupted batch without a result yet."""


@dataclass(frozen=True)
class _WaitingCall:
    """The one call a request asked through the API waits on (none for a question), as ``publish`` reads it."""

    call: ToolUse | None
    answer_offered: bool = False
    """The approver may answer in words instead (an approval asked with ``respond``)."""

    @property
    def pending_tool_uses(self) -> list[ToolUse]:
        return [self.call] if self.call is not None else []


@dataclass(kw_only=True)  # not frozen: the crash tests stop a worker inside ``publish``
class RoundPublisher:
    """Publishes agents' outcomes (and rounds asked through the HTTP API) for any number of workers."""

    redis: Redis
    """The client a round's one transaction (across the owners below) is opened on."""
    sessions: SessionStore
    approvals: ApprovalStore
    threads: Threads
    schedule: Schedule
    outbox: Outbox
    audit: Audit
    grants: GrantStore
    decisions: DecisionService
    policies: PolicyBook
    retention_s: int = 30 * 86_400
    """How long a finished round stays readable."""
    clock: Clock = system_clock

    def publish_request(
        self,
        session_id: str,
        info: ThreadInfo,
        interrupt: Interrupt,
        call: ToolUse,
        *,
        client: str,
        answer_offered: bool = False,
    ) -> None:
        """Publish a round of one approval asked from outside an agent (the HTTP API), as an agent's round is.

        The interrupt guards ``call`` (its id names the call's toolUseId), so the request, its policy,
        schedule, audit and message are exactly those of an agent stopped before that call; ``client``
        names who asked. Publishing the same request again opens nothing new. ``answer_offered``: the approver may
        answer in words instead of deciding (the client's tool takes the words as its result).
        """
        self.threads.remember(session_id, info)
        result = AgentResult("interrupt", None, [interrupt])
        self.publish(session_id, info, _WaitingCall(call, answer_offered), result, client=client)

    def publish_question(self, session_id: str, info: ThreadInfo, interrupt: Interrupt, *, client: str) -> None:
        """Publish a round of one question asked from outside an agent (the HTTP API), as an agent's question is.

        No call waits on it: the rules of its interrupt's name apply, and its reason is the question.
        """
        self.threads.remember(session_id, info)
        result = AgentResult("interrupt", None, [interrupt])
        self.publish(session_id, info, _WaitingCall(None), result, client=client)

    def publish(
        self,
        session_id: str,
        info: ThreadInfo,
        agent: PendingCalls,
        result: AgentResult,
        *,
        client: str | None = None,
        answered: Sequence[Decision] = (),
    ) -> None:
        """Publish ``result``, the agent's outcome at the session's current version, in one transaction.

        An interrupt opens a round: its requests (under the policy of the calls they guard), their
        schedule, audit and posts. Anything else is the agent's reply, posted in order. The previous
        round's records are let expire; ``client`` names who asked, for a round asked through the API.
        ``answered``: the decisions the agent was resumed with (a reply repeating a refusal reads as ours).
        """
        version = self.sessions.version(session_id)
        transaction = self.redis.pipeline(transaction=True)
        decided_unasked: list[tuple[str, str]] = []  # (outcome, source) of what a rule or a grant decided here
        by_grant: list[tuple[int, ApprovalRequest, GrantUse]] = []  # the decide script's place, for its answer
        if self.approvals.round_marks(session_id)[0] != version:
            # The previous round is over (its outcome is what we publish): keep it for the retention period only.
            self.approvals.expire_round(transaction, session_id, after_s=self.retention_s)
        if result.stop_reason == "interrupt":
            waiting = agent.pending_tool_uses
            requests = [
                self._request(session_id, version, info, interrupt, waiting, client=client, agent=agent)
                for interrupt in result.interrupts
            ]
            opened = self.approvals.open_round(
                session_id=session_id, version=version, requests=requests, pipeline=transaction
            )
            # Before the transaction (a grant lives in its channel's slot, not the session's): one round trip each,
            # for the requests opened now only. One published before (the same round again) was decided by a grant
            # then, or asked: a grant made since never decides it, so no use of it is counted.
            covering = {request.approval_id: self._covering_grant(request) for request in opened}
            for request in opened:
                if request.policy.tier == "ask":
                    # A grant's decision may be refused (revoked meanwhile): then people decide. Its decision, when
                    # written, takes the schedule away again in this very transaction.
                    self.schedule.plan(transaction, request)
                self.audit.add(
                    transaction,
                    "request",
                    session_id=session_id,
                    actor=request.requested_by,
                    approval_id=request.approval_id,
                    tool=request.tool,
                    interrupt=request.interrupt_name,
                    policy=request.policy.name,
                    **({"client": client} if client is not None else {}),  # the API key that asked, if any
                )
            for request in opened:
                entry = post_approval(
                    session_id, request.approval_id, team_id=request.team_id, channel=request.channel_id
                )
                self.outbox.add(transaction, entry)
            for request in opened:
                # After its post (the thread shows the message, then its update): rendered when sent, a request
                # its rule decided is posted decided, never with live buttons.
                use = covering[request.approval_id]
                if request.policy.tier != "ask":
                    self.decisions.by_rule_in(transaction, request)
                    decided_unasked.append(("approve" if request.policy.tier == "allow" else "deny", "policy"))
                elif use is not None:
                    by_grant.append((len(transaction), request, use))  # where its answer comes back
                    self.decisions.by_grant_in(transaction, request, use)
        else:
            reply = str(result) or f"(stopped: {result.stop_reason})"
            # The model's words are escaped: an answer (or a tool's output it repeats) cannot ping @channel.
            # A long answer is several messages (Slack's limits), posted in order.
            # Where it repeats what a refused call told the model (the demo agent does), people read our account.
            accounts = blocks.refusal_accounts(answered)
            where = {"channel": info.channel_id, "thread_ts": info.thread_ts}
            parts = [{**where, **message} for message in blocks.agent_reply_messages(reply, accounts)]
            for entry in posts_in_order(parts, team_id=info.team_id, session_id=session_id):
                self.outbox.add(transaction, entry)
        # Approvals are waiting: the thread's records must not expire.
        expire_after_s = None if result.stop_reason == "interrupt" else self.retention_s
        self.approvals.mark_published(transaction, session_id, version, expire_after_s=expire_after_s)
        self.threads.keep(transaction, session_id, expire_after_s=expire_after_s)
        answers = transaction.execute()
        decided_unasked += self._settle_grants(by_grant, answers)
        for outcome, source in decided_unasked:  # counted once written: a failed transaction decided nothing
            metrics.decided(outcome=outcome, source=source, waited_s=0.0)

    def _settle_grants(
        self, by_grant: list[tuple[int, ApprovalRequest, GrantUse]], answers: list[Any]
    ) -> list[tuple[str, str]]:
        """What the grants' decisions came to: each use leaves the in-flight list.

        One refused is audited; the request it was asked in waits for people.
        """
        decided = []
        for place, request, use in by_grant:
            status = as_text(answers[place][0])
            if status == Status.DECIDED:
                decided.append(("approve", "grant"))
            elif status in (Status.REVOKED, TOO_LATE):
                # Revoked after the use (or the use is too old to decide): the request waits for people.
                logger.info("approval_id=<%s>, grant=<%s> | %s: asked", request.approval_id, use.grant.grant_id, status)
                self.audit.record(
                    "grant_use_refused",
                    session_id=request.session_id,
                    approval_id=request.approval_id,
                    grant=use.grant.grant_id,
                    why=status,
                )
            self.grants.decided(use, session_id=request.session_id, approval_id=request.approval_id)
        return decided

    def _covering_grant(self, request: ApprovalRequest) -> GrantUse | None:
        """The standing approval that covers the request's one call, if its rule offers them and one does."""
        policy = request.policy
        if request.call_digest is None or not policy.grant_durations or policy.tier != "ask":
            return None  # a batch, a shortened input, a question whether to run again: never covered
        asked = Call(
            team_id=request.team_id,
            channel_id=request.channel_id,
            digest=request.call_digest,
            rule=policy.name,
            requester=request.requested_by,
            self_approval=policy.allow_self_approval,
            terms=deciders_digest(policy),
            longest_ms=max(policy.grant_durations) * 1000,
            pattern=pattern_key(request.tool, client=request.client) if request.tool else "",
            fields=field_digests(request.tool or "", request.tool_input, client=request.client),
        )
        return self.grants.use(
            asked, session_id=request.session_id, approval_id=request.approval_id, clock_offset_ms=offset_ms(self.clock)
        )

    def _policy(self, interrupt: Interrupt, guarded: list[ToolUse], *, single: GuardedCall | None) -> PolicySummary:
        """The rule for what the interrupt guards; a question whether to run a call again is left to people."""
        policy = self.policies.for_call(
            tool=single.tool if single else None,
            interrupt_name=interrupt.name,
            batch=[call["name"] for call in guarded],
            # Conditions read the input as the agent sent it, not as bounded for storage and display.
            tool_input=guarded[0]["input"] if single else None,
            batch_inputs=[call["input"] for call in guarded],
        ).summary()
        if not is_rerun_interrupt(interrupt.name):
            return policy
        # The call may have run already: only a person who sees that question may run it again. Nobody
        # answering must never run it (expiry), nor a rule or a standing approval that would answer for them.
        return policy.model_copy(
            update={
                "expiry_outcome": "deny" if policy.expiry_outcome == "approve" else policy.expiry_outcome,
                "tier": "ask" if policy.tier == "allow" else policy.tier,
                "grant_durations": (),
            }
        )

    def _request(
        self,
        session_id: str,
        version: int,
        info: ThreadInfo,
        interrupt: Interrupt,
        waiting: list[ToolUse],
        *,
        client: str | None = None,
        agent: PendingCalls | None = None,
    ) -> ApprovalRequest:
        # The call comes from the interrupt's id and the agent's pending batch, never from the
        # reason: whoever raised the interrupt, the tool's rules apply to the tool that waits.
        guarded = guarded_calls(interrupt.id, waiting)
        calls = tuple(
            GuardedCall(tool=call["name"], input=bounded_json(call["input"]), tool_use_id=call["toolUseId"])
            for call in guarded
        )
        single = calls[0] if len(calls) == 1 else None
        policy = self._policy(interrupt, guarded, single=single)
        asked = question_of(interrupt.name, interrupt.reason)
        question = _question(asked, interrupt) if asked is not None else None
        if question is not None:
            policy = _for_a_question(policy, info.requested_by)
        now = self.clock()
        keeps_pending = policy.expiry_outcome == "keep"
        expires_at = (
            now + timedelta(seconds=policy.expire_after_s) if policy.expire_after_s and not keeps_pending else None
        )
        # A standing approval covers exactly the call the agent sent: never one whose input was shortened to be kept.
        digest = exact_input = None
        if single is not None and single.input == guarded[0]["input"]:
            digest = call_digest(single.tool, guarded[0]["input"], client=client)
            exact_input = input_digest(guarded[0]["input"])
        return ApprovalRequest(
            approval_id=keys.approval_id(session_id, approval_id_for(session_id, version, interrupt.id)),
            session_id=session_id,
            interrupt_id=interrupt.id,
            interrupt_name=interrupt.name,
            **asdict(info),  # the request lives where the thread does, and names who asked in it
            client=client,
            tool=single.tool if single else None,
            tool_input=single.input if single else None,
            tool_use_id=single.tool_use_id if single else None,
            calls=calls,
            reason=bounded_json(interrupt.reason),  # stored and shown: never deeper or longer than a record can hold
            policy=policy,
            response_shape=_asked_shape(interrupt.reason)
            or ("answer" if question is not None else None)
            or policy.response
            or expected_shape(interrupt.name)
            or "record",
            created_at=now,
            expires_at=expires_at,
            call_digest=digest,
            input_digest=exact_input,
            input_schema=_input_schema(interrupt.reason) if exact_input is not None else None,
            question=question,
            trust_offered=_offers_trust(agent, interrupt, single, policy) if question is None else False,
            answer_offered=question is None and isinstance(agent, _WaitingCall) and agent.answer_offered,
        )


def _offers_trust(
    agent: PendingCalls | None, interrupt: Interrupt, single: GuardedCall | None, policy: PolicySummary
) -> bool:
    """Whether an approver may also trust the one tool the interrupt guards for the rest of the session.

    Only where the agent lets a person trust it, the rule does not forbid it, and one person's approval decides.
    """
    if single is None or not policy.trust or policy.tier != "ask" or policy.quorum != 1:
        return False
    return isinstance(agent, TrustsTools) and agent.offers_trust(interrupt, single.tool)


def _question(asked: AskedQuestion, interrupt: Interrupt) -> Question:
    """The question to store; one whose options or form cannot be offered is asked in words, saying why."""
    try:
        return asked_question(asked)
    except QuestionError as problem:
        logger.warning("interrupt_id=<%s> | the question is asked in words: %s", interrupt.id, problem)
        return question_in_words(asked, problem)


def _for_a_question(policy: PolicySummary, requester: str) -> PolicySummary:
    """The rule's terms as they apply to a question: answered in a person's words, once, by someone it is asked of.

    Whom: the deciders of a rule that matches the question and names some, else the person whose request the agent
    works on (anyone in the channel when nobody asked, as for an API request made for nobody). The ``default``
    section's approvers decide approvals: a question no rule matches is the asker's. Answering is not approving
    one's own call, so the asker may answer. No rule, standing approval or expiry answers in anyone's words.
    """
    named = bool(policy.approver_users or policy.approver_groups or policy.also_approvers)
    restricted = named and policy.name != DEFAULT_POLICY_NAME
    update: dict[str, Any] = {
        "tier": "ask" if policy.tier == "allow" else policy.tier,
        "quorum": 1,
        "grant_durations": (),
        "edits": "forbidden",
        "allow_self_approval": True,
        "reason_required_on_deny": False,
        "expiry_outcome": "deny" if policy.expiry_outcome == "approve" else policy.expiry_outcome,
    }
    if not restricted and requester:
        update |= {"approver_users": (requester,), "approver_groups": (), "also_approvers": ()}
    return policy.model_copy(update=update)


def _input_schema(reason: Any) -> dict[str, Any] | None:
    """The tool's input schema the raiser gave with its reason (``"inputSchema"``), if it is one we can keep whole."""
    schema = reason.get("inputSchema") if isinstance(reason, dict) else None
    if not isinstance(schema, dict) or bounded_json(schema, max_chars=_SCHEMA_MAX_CHARS) != schema:
        return None  # a schema cut short would describe another input: edit it as JSON instead
    return schema


def _asked_shape(reason: Any) -> ResponseShape | None:
    """The response shape the raiser asked for with its reason's ``"response"`` key, if any."""
    shape = reason.get("response") if isinstance(reason, dict) else None
    return shape if shape in RESPONSE_SHAPES else None
