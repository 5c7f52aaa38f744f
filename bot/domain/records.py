"""The bot's records: one approval request per raised interrupt, and the decision on it.

They are stored in Redis as JSON and rendered by ``bot.render.blocks``; every load validates them.
The decision record itself is ``agent.approval.Decision``: it is what the agent receives.
"""

import hashlib
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agent.approval import AnswerShape, Decision, DiscussionEntry, ResponseShape

__all__ = [
    "ApprovalRequest",
    "ApproverSet",
    "Decision",
    "DiscussionEntry",
    "GuardedCall",
    "LevelRecord",
    "PolicySummary",
    "Question",
    "QuestionKind",
    "QuestionOption",
    "approval_id_for",
    "place_of_session",
    "session_id_for",
    "thread_of_session",
]


def session_id_for(team_id: str, channel_id: str, thread_ts: str) -> str:
    """One session per Slack thread."""
    return f"{team_id}:{channel_id}:{thread_ts}"


def thread_of_session(session_id: str) -> tuple[str, str] | None:
    """The channel and thread ts of a session made by ``session_id_for`` (``None`` for an id of another form)."""
    parts = session_id.split(":")
    return (parts[1], parts[2]) if len(parts) == 3 and parts[1] and parts[2] else None


def place_of_session(session_id: str) -> tuple[str, str]:
    """The team and channel of a session made by ``session_id_for`` (``("", "")`` for an id of another form)."""
    parts = session_id.split(":")
    return (parts[0], parts[1]) if len(parts) == 3 else ("", "")


def approval_id_for(session_id: str, version: int, interrupt_id: str) -> str:
    """A short, stable id for one interrupt of one round of one session (fits in a button value).

    The round is the session's version when the agent stopped: agents reuse interrupt ids (a
    Strands batch hook's id is the same for every batch, a model may reuse toolUseIds), so an
    id without the round would give a later round the record, and the decision, of an earlier one.
    """
    return hashlib.sha256(f"{session_id}\n{version}\n{interrupt_id}".encode()).hexdigest()[:24]


class LevelRecord(BaseModel):
    """One escalation level as recorded on a request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    after_s: int
    users: tuple[str, ...] = ()
    usergroups: tuple[str, ...] = ()
    rotation: str | None = None


class ApproverSet(BaseModel):
    """Users and user groups, any of whom qualifies (as a rule's ``approvers`` lists them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    users: tuple[str, ...] = ()
    usergroups: tuple[str, ...] = ()


class PolicySummary(BaseModel):
    """The policy that applies to a request, recorded with it.

    A later edit of the file does not change the rules of a request already asked.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    approver_users: tuple[str, ...] = ()
    approver_groups: tuple[str, ...] = ()
    also_approvers: tuple[ApproverSet, ...] = ()
    """Further lists the person must also be in: a batch under several rules needs someone each admits."""
    allow_self_approval: bool = False
    allow_external: bool = False
    reason_required_on_deny: bool = False
    quorum: int = 1
    levels: tuple[LevelRecord, ...] = ()
    repeat: int = 0
    claim_pause_s: int | None = None
    remind_every_s: int | None = None
    expire_after_s: int | None = None
    expiry_outcome: Literal["deny", "keep", "approve"] | None = None
    response: ResponseShape | None = None
    """The rule's ``response``; ``None``: what the interrupt's code reads (``agent.vended.expected_shape``)."""
    tier: Literal["allow", "ask", "deny"] = "ask"
    """``allow`` and ``deny`` are decided by the rule when the request is opened; ``ask`` waits for people."""
    message: str | None = None
    """What a ``deny`` rule tells the agent and the thread."""
    grant_durations: tuple[int, ...] = ()
    """The standing approvals a person approving the request may also make (seconds each)."""
    grant_scope: Literal["requester", "channel"] = "requester"
    """Whose calls such a grant covers: the requester's, or anyone's in the channel."""
    edits: Literal["allowed", "forbidden", "other_approver"] = "allowed"
    """Whether the call may be edited before it is approved, and by whom it is approved then."""
    trust: bool = True
    """Whether a person may trust the tool for the rest of the session, where the agent offers it."""


class GuardedCall(BaseModel):
    """A tool call an interrupt guards (found from the interrupt's id, never from its reason)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    input: Any = None
    tool_use_id: str


class QuestionOption(BaseModel):
    """One answer a question offers to choose (``bot.domain.question_kinds`` checks it when the question is asked)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    """What the person picks, and what the agent receives (at most 75 characters: a Slack option's text)."""
    description: str | None = None


QuestionKind = Literal["text", "choice", "form"]
"""How a question is answered: in words, by choosing among its options, or by filling in its form."""


class Question(BaseModel):
    """What a request asks a person when the agent wants an answer, not a decision (``agent.vended.question_of``).

    A question stored before questions had kinds holds its text only: it is answered in words.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    """The question, as the agent asked it (stored bounded, shown escaped)."""
    kind: QuestionKind = "text"
    options: tuple[QuestionOption, ...] = ()
    """``choice``: the answers to choose from, in the agent's order (labels distinct)."""
    multiple: bool = False
    """``choice``: whether several options may be chosen (the answer is then a list of labels)."""
    other: bool = False
    """``choice``: whether the person may answer in words instead ("Other…"; the answer is then the words)."""
    form: dict[str, Any] | None = None
    """``form``: the JSON Schema (an object's) of the answer."""
    problem: str | None = None
    """Why what the agent offered with the question could not be used (it is then answered in words)."""


class ApprovalRequest(BaseModel):
    """One interrupt waiting for a human, and where its Slack message lives.

    Attributes:
        approval_id: ``approval_id_for(session_id, version, interrupt_id)``; carried by the buttons.
        session_id: The agent session (team, channel, thread).
        interrupt_id: The interrupt to answer.
        interrupt_name: The interrupt's name (``"approval"`` for tool gates).
        team_id: Slack workspace.
        channel_id: Channel of the thread.
        thread_ts: The thread the session lives in.
        requested_by: The Slack user whose request made the agent ask ("" for an API request made for nobody).
        client: The API client (key name) that asked, for a request made through the HTTP API.
        tool: The tool waiting, when the interrupt guards one tool call.
        tool_input: Its arguments.
        tool_use_id: Its toolUseId.
        calls: Every call the interrupt guards: one, several for a batch hook, none when the
            tool cannot be determined (then only interrupt-name rules and the default apply).
        reason: The interrupt's reason, as the agent gave it.
        policy: The policy that decides who may answer.
        response_shape: What the agent receives on resume: the reason's ``"response"`` key, else the rule's
            ``response``, else what a vended interrupt's code reads (``agent.vended``), else the record.
        created_at: When the interrupt was raised.
        expires_at: When it expires without a decision, if ever.
        message_ts: The approval message, once posted.
        call_digest: The one call it guards, exactly as the agent sent it (``bot.domain.grants.call_digest``), when
            a standing approval may cover it: ``None`` for a batch, or an input shortened to be stored.
        input_digest: ``agent.approval.input_digest`` of its one call's input, exactly as the agent sent it: an
            approval names it (``None`` as for ``call_digest``: then its input cannot be edited either).
        input_schema: The JSON Schema of the tool's input, when the agent gave it: an edit is made field by field.
        question: What the agent asks, when it asks a question (answered in words) rather than for a decision.
        trust_offered: Whether an approver may also trust the tool for the rest of the session (the agent lets a
            person trust it, and the rule does not forbid it).
        answer_offered: Whether an approver may also answer the approval in words instead of deciding it (asked
            through the API with ``respond``): the answer ends it as a question's does (``answer``).
    """

    model_config = ConfigDict(extra="forbid")

    approval_id: str
    session_id: str
    interrupt_id: str
    interrupt_name: str
    team_id: str
    channel_id: str
    thread_ts: str
    requested_by: str
    client: str | None = None
    tool: str | None = None
    tool_input: Any = None
    tool_use_id: str | None = None
    calls: tuple[GuardedCall, ...] = ()
    reason: Any = None
    policy: PolicySummary
    response_shape: AnswerShape = "record"
    created_at: datetime
    expires_at: datetime | None = None
    message_ts: str | None = None
    call_digest: str | None = None
    input_digest: str | None = None
    input_schema: dict[str, Any] | None = None
    question: Question | None = None
    trust_offered: bool = False
    answer_offered: bool = False

    @property
    def asks(self) -> bool:
        """Whether the request is a question (answered in words), not an approval (approved or denied)."""
        return self.question is not None
