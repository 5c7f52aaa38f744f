"""One policy: what a rule (or the ``default`` section) of a policy file sets, and what applies to one interrupt.

``PolicySettings`` are the keys the default and every rule set; a ``Rule`` adds its name and what it matches
(``Match``); a ``Policy`` is what applies to one interrupt, under the name of the rule it comes from. An
interrupt guarding a batch of calls gets one policy satisfying each call's: ``strictest``. The file as a whole,
and which rule applies to a call, are ``bot.domain.policy.policy``; the timed keys are in ``bot.domain.policy.ladder``.
"""

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictStr,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from agent.approval import ResponseShape
from bot.domain.grants import GrantTerms
from bot.domain.patterns import NAME_PATTERN, published, whole_match
from bot.domain.policy import conditions
from bot.domain.policy.ladder import Claim, Escalation, Expiry, ExpiryKey, Reminders
from bot.domain.policy.required import at_least_one
from bot.domain.records import ApproverSet, LevelRecord, PolicySummary
from bot.domain.slack_ids import ChannelId, UsergroupId, UserId

__all__ = [
    "DEFAULT_POLICY_NAME",
    "Approvers",
    "Match",
    "Policy",
    "PolicyModel",
    "PolicySettings",
    "Rule",
    "ToolName",
    "file_error",
    "strictest",
]

DEFAULT_POLICY_NAME = "default"
"""The name of the policy that applies when no rule matches."""

_RULE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


# --- field types -----------------------------------------------------------------------------


def _rule_name(value: str) -> str:
    if not _RULE_NAME.match(value):
        raise PydanticCustomError(
            "rule_name",
            "'{value}' is not a valid rule name (1 to 63 letters, digits, '-', '_' or '.', starting with a "
            "letter or digit)",
            {"value": value},
        )
    if value == DEFAULT_POLICY_NAME:
        raise PydanticCustomError("rule_name", "'default' is reserved for the default policy; pick another name")
    return value


Tier = Literal["allow", "ask", "deny"]
Edits = Literal["allowed", "forbidden", "other_approver"]
_EDITS_STRICTNESS: tuple[Edits, ...] = ("allowed", "other_approver", "forbidden")
Condition = Annotated[StrictStr, AfterValidator(conditions.checked)]

_name = whole_match(
    NAME_PATTERN, code="name", message="{value} is not a valid name (no whitespace or control characters)"
)


RuleName = Annotated[StrictStr, AfterValidator(_rule_name)]
ToolName = Annotated[StrictStr, AfterValidator(_name), published(NAME_PATTERN)]
InterruptName = Annotated[StrictStr, AfterValidator(_name), published(NAME_PATTERN)]


# --- what a rule sets ------------------------------------------------------------------------


class PolicyModel(BaseModel):
    """A part of a policy file: an unknown key is an error, and nothing changes once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Approvers(PolicyModel):
    """Who may decide. Nobody listed means anyone in the channel."""

    users: tuple[UserId, ...] = ()
    """Slack users who may decide."""
    usergroups: tuple[UsergroupId, ...] = ()
    """Slack user groups whose members may decide (read with ``usergroups.users.list``, cached five minutes)."""

    @property
    def is_open(self) -> bool:
        """Whether nobody is listed, so that anyone in the channel may decide."""
        return not self.users and not self.usergroups


class PolicySettings(PolicyModel):
    """What the ``default`` section and every rule set (see ``bot.domain.policy.ladder`` for the timed keys)."""

    approvers: Approvers = Field(default_factory=Approvers)
    allow_self_approval: StrictBool = False
    """Whether the requester may decide on their own request (when otherwise allowed to)."""
    allow_external: StrictBool = False
    """Whether people of another workspace (Slack Connect) may decide, when otherwise allowed to."""
    reason_required_on_deny: StrictBool = False
    """Whether a deny needs a reason: the deny form requires one, and a deny without one is refused."""
    quorum: int = Field(default=1, ge=1, le=20)
    """Distinct approvals needed; one deny ends the request."""
    low_risk: StrictBool = False
    """Only low-risk requests may be approved automatically on expiry."""
    response: ResponseShape | None = None
    """What the agent receives: the decision record, ``"y"``/``"n"`` (``yes_no``) or a boolean. Unset: what the
    interrupt's code reads (Strands' ``HumanInTheLoop``: ``"y"``/``"n"``), else the record."""
    edits: Edits = "allowed"
    """Whether an approver may edit the call before approving it (``other_approver``: someone else approves it)."""
    trust: StrictBool = True
    """Whether "Approve and trust <tool> for this session" is offered where the agent lets a person trust a tool
    (Strands' ``HumanInTheLoop(enable_trust=True)``); ``false``: every call of the tool is asked. Never offered for a
    tool whose first rule has a condition (a trusted tool's calls are weighed by no rule)."""
    channel: ChannelId | None = None
    """Where a request made through the HTTP API for a matching tool is posted when it names no channel."""
    escalation: Escalation | None = None
    claim: Claim | None = None
    reminders: Reminders | None = None
    expiry: ExpiryKey = None
    """After ``after``, the request ends with ``outcome`` (``keep`` leaves it pending); ``never``: it waits until
    decided. Unset: it ends as expired after ``DEFAULT_EXPIRY`` (the deployment's setting, 7 days unless set)."""
    grants: GrantTerms | None = None
    """Standing approvals offered with each request ("Approve + allow 1h"); none unless listed."""

    @model_validator(mode="after")
    def _auto_approve_only_low_risk(self) -> Self:
        errors = []
        if self.ends is not None and self.ends.outcome == "approve" and not self.low_risk:
            errors.append(
                file_error(("expiry", "outcome"), "'approve' on expiry needs 'low_risk: true' on the same rule")
            )
        if self.grants is not None and self.quorum > 1:
            # One person cannot stand in for the several approvals every call needs.
            errors.append(file_error(("grants",), "a rule needing a quorum of several cannot offer standing approvals"))
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self

    @property
    def ends(self) -> Expiry | None:
        """The expiry the request gets: ``None`` when it waits until decided (``never``, or unset without a default)."""
        return self.expiry if isinstance(self.expiry, Expiry) else None

    def or_expiring(self, default: Expiry) -> Self:
        """These settings, with ``default`` as the expiry unless they set one (or say ``never``)."""
        return self if self.expiry is not None else self.model_copy(update={"expiry": default})


class Policy(PolicySettings):
    """The settings that apply to one interrupt, under the name of the rule they come from."""

    name: StrictStr
    tier: Tier = "ask"
    """``ask`` people (the default); ``allow``: the call runs without asking; ``deny``: refused, never asked."""
    message: StrictStr | None = Field(default=None, min_length=1, max_length=500)
    """What a ``deny`` tells the agent and the thread (else a sentence naming the rule)."""
    # Not a key of the file: set only when several rules apply at once (a batch, see ``PolicyBook.for_call``).
    _also_approvers: tuple[Approvers, ...] = PrivateAttr(default=())

    @property
    def also_approvers(self) -> tuple[Approvers, ...]:
        """Further approver lists a person must also be in (each non-empty): one per other rule that applies."""
        return self._also_approvers

    def summary(self) -> PolicySummary:
        """What an approval message records about this policy."""
        return PolicySummary(
            name=self.name,
            approver_users=self.approvers.users,
            approver_groups=self.approvers.usergroups,
            also_approvers=tuple(
                ApproverSet(users=extra.users, usergroups=extra.usergroups) for extra in self.also_approvers
            ),
            allow_self_approval=self.allow_self_approval,
            allow_external=self.allow_external,
            reason_required_on_deny=self.reason_required_on_deny,
            quorum=self.quorum,
            levels=tuple(
                LevelRecord(
                    after_s=level.after,
                    users=level.targets.users,
                    usergroups=level.targets.usergroups,
                    rotation=level.targets.rotation,
                )
                for level in (self.escalation.levels if self.escalation else ())
            ),
            repeat=self.escalation.repeat if self.escalation else 0,
            claim_pause_s=self.claim.pause if self.claim else None,
            remind_every_s=self.reminders.every if self.reminders else None,
            expire_after_s=self.ends.after if self.ends else None,
            expiry_outcome=self.ends.outcome if self.ends else None,
            response=self.response,
            tier=self.tier,
            message=self.message,
            grant_durations=self.grants.durations if self.grants and self.tier == "ask" else (),
            grant_scope=self.grants.scope if self.grants else "requester",
            edits=self.edits,
            trust=self.trust,
        )

    @classmethod
    def from_summary(cls, summary: PolicySummary) -> "Policy":
        """The policy an approval message recorded (so a later click is judged by the same rules)."""
        policy = cls(
            name=summary.name,
            approvers=Approvers(users=summary.approver_users, usergroups=summary.approver_groups),
            allow_self_approval=summary.allow_self_approval,
            reason_required_on_deny=summary.reason_required_on_deny,
        )
        policy._also_approvers = tuple(
            Approvers(users=extra.users, usergroups=extra.usergroups) for extra in summary.also_approvers
        )
        return policy

    def approvers_text(self) -> str:
        """Who may decide, in Slack mrkdwn: ``<@U1>, <@U2> or <!subteam^S1>`` (``…, and also …`` per further list)."""
        if self.approvers.is_open:
            return "anyone in the channel" if self.allow_self_approval else "anyone in the channel except the requester"
        return ", and also ".join(_one_of(listed) for listed in (self.approvers, *self.also_approvers))


class Match(PolicyModel):
    """What a rule applies to: tool names and/or interrupt names (at least one), and for tools a condition."""

    tools: tuple[ToolName, ...] = ()
    """Tool names: the rule applies to the call an interrupt guards when its tool is listed."""
    interrupts: tuple[InterruptName, ...] = ()
    """Interrupt names: the rule applies to an interrupt of that name that no tool rule took."""
    when: Condition | None = None
    """A CEL condition on the call (``args``, its input; ``tool``, its name): the rule applies only where it holds."""

    _not_empty = at_least_one(
        "tools", "interrupts", error_type="empty_match", message="a rule must match at least one tool or interrupt name"
    )

    @model_validator(mode="after")
    def _when_on_tools_only(self) -> Self:
        if self.when is not None and self.interrupts:
            raise PydanticCustomError(
                "when_on_interrupts", "a condition ('when') reads a call's input: a rule with one matches tools only"
            )
        return self


class Rule(Policy):
    """A named policy for the tools and interrupt names it matches."""

    name: RuleName
    """The rule's name: 1 to 63 letters, digits, ``-``, ``_`` or ``.``, starting with a letter or digit (``default``
    is reserved). Messages, the audit and the metrics name it."""
    match: Match

    @model_validator(mode="after")
    def _conditions_decide_not_route(self) -> Self:
        errors = []
        if self.match.when is not None and self.channel is not None:
            # Where a request goes must not hang on its input: the API's document says which tools need a channel.
            errors.append(
                file_error(("channel",), "a rule with a condition ('when') cannot route: set channel elsewhere")
            )
        if self.grants is not None and self.tier != "ask":
            errors.append(file_error(("grants",), "standing approvals are offered where people decide: tier ask only"))
        if self.message is not None and self.tier != "deny":
            errors.append(file_error(("message",), "a message is what a 'deny' rule tells the agent: set tier: deny"))
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self


def strictest(policies: Sequence[Policy]) -> Policy:
    """One policy that satisfies each of ``policies`` (the rules of one batch's calls, in file order).

    A person may decide only if every policy admits them (their approver lists must all admit
    them; an open one admits anyone), and may approve their own request (or decide from another
    workspace) only if every policy allows it. A deny needs a reason if any policy asks for one;
    the quorum is the largest. Expiry approves only if every policy approves on expiry (all
    ``low_risk``); otherwise a ``deny`` expiry, the earliest, ends it; otherwise it stays pending.
    Reminders come as often as the most frequent asks; the ladder (and its claim) is the one of the
    first policy that restricts who may decide and has a ladder, else of the first that has one.
    ``response`` is the first policy's: it is what the raiser reads, not a permission. The batch is refused
    if any call's rule refuses it, runs without asking only if every call's rule allows it, else is asked.
    """
    first = policies[0]
    restricted = [policy for policy in policies if not policy.approvers.is_open]
    with_ladder = [policy for policy in (*restricted, *policies) if policy.escalation is not None]
    ladder = with_ladder[0] if with_ladder else None
    reminders = [policy.reminders for policy in policies if policy.reminders is not None]
    combined = Policy(
        name=" + ".join(policy.name for policy in policies),
        approvers=restricted[0].approvers if restricted else Approvers(),
        allow_self_approval=all(policy.allow_self_approval for policy in policies),
        allow_external=all(policy.allow_external for policy in policies),
        reason_required_on_deny=any(policy.reason_required_on_deny for policy in policies),
        quorum=max(policy.quorum for policy in policies),
        low_risk=all(policy.low_risk for policy in policies),
        response=first.response,
        escalation=ladder.escalation if ladder else None,
        claim=ladder.claim if ladder else None,
        reminders=min(reminders, key=lambda nudge: nudge.every) if reminders else None,
        expiry=_strictest_expiry([policy.ends for policy in policies]),
        tier=_strictest_tier(policies),
        edits=max((policy.edits for policy in policies), key=_EDITS_STRICTNESS.index),
        trust=all(policy.trust for policy in policies),
        message=next((policy.message for policy in policies if policy.tier == "deny"), None),
    )
    lists = [listed for policy in restricted for listed in (policy.approvers, *policy.also_approvers)]
    combined._also_approvers = tuple(listed for listed in dict.fromkeys(lists[1:]) if listed != lists[0])
    return combined


def _strictest_tier(policies: Sequence[Policy]) -> Tier:
    """Refused if any call is, run without asking only if every call may, else asked."""
    tiers = {policy.tier for policy in policies}
    return "deny" if "deny" in tiers else "allow" if tiers == {"allow"} else "ask"


def _strictest_expiry(expiries: Sequence[Expiry | None]) -> Expiry | None:
    if expiries and all(expiry is not None and expiry.outcome == "approve" for expiry in expiries):
        return max(expiries, key=lambda expiry: expiry.after if expiry else 0)
    denying = [expiry for expiry in expiries if expiry is not None and expiry.outcome == "deny"]
    if denying:
        return min(denying, key=lambda expiry: expiry.after)
    return next((expiry for expiry in expiries if expiry is not None and expiry.outcome == "keep"), None)


def _one_of(listed: Approvers) -> str:
    mentions = [f"<@{user}>" for user in dict.fromkeys(listed.users)]
    mentions += [f"<!subteam^{group}>" for group in dict.fromkeys(listed.usergroups)]
    if len(mentions) == 1:
        return mentions[0]
    return f"{', '.join(mentions[:-1])} or {mentions[-1]}"


def file_error(loc: tuple[int | str, ...], template: str, **context: Any) -> InitErrorDetails:
    """The error at ``loc`` of a policy file: ``template`` filled in from ``context``."""
    return InitErrorDetails(
        type=PydanticCustomError("policy", template, context), loc=loc, input=context.get("value", context.get("name"))
    )
