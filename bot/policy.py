"""The approval policy: who may approve or deny which agent call, read from a YAML or TOML file.

A policy file has a ``default`` section and an ordered list of ``rules``; a rule applies to the
tools and/or interrupt names it lists. For an interrupt, the first rule listing its tool wins,
else the first rule listing its interrupt name, else the default::

    default:                        # applies when no rule matches
      approvers: {}                 # nobody listed: anyone in the channel (but the requester)
      allow_self_approval: false
      reason_required_on_deny: false
    rules:
      - name: production-changes
        match: {tools: [restart_service, rollback_deploy]}
        approvers: {users: [U012AB3CD], usergroups: [S0614TZR7]}
        reason_required_on_deny: true
        response: yes_no            # what the agent receives: record (default), yes_no or boolean

The same in TOML is ``[default]`` / ``[default.approvers]`` and ``[[rules]]`` / ``[rules.match]``.

Every key is checked: unknown keys, ids that are not Slack ids, duplicate rule names and a tool
(or interrupt name) listed by two rules are errors. Reading a file (and reporting its errors with
their lines) is ``bot.policy_file.load_policy``; the timed keys are in ``bot.ladder``.

Deciding who may answer is ``authorize``: pure, given the members of the listed user groups
(resolving those through Slack is the caller's job).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from agent.approval import ResponseShape
from bot.ladder import Claim, Escalation, Expiry, Level, Reminders
from bot.model import LevelRecord, PolicySummary
from bot.oncall import Rotation
from bot.slack_ids import UsergroupId, UserId

__all__ = [
    "DEFAULT_POLICY_NAME",
    "Approvers",
    "Match",
    "Policy",
    "PolicyBook",
    "PolicySettings",
    "Rule",
    "Verdict",
    "authorize",
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


def _name(value: str) -> str:
    if not value or any(char.isspace() for char in value):
        raise PydanticCustomError("name", "'{value}' is not a valid name (non-empty, no whitespace)", {"value": value})
    return value


RuleName = Annotated[StrictStr, AfterValidator(_rule_name)]
ToolName = Annotated[StrictStr, AfterValidator(_name)]
InterruptName = Annotated[StrictStr, AfterValidator(_name)]


# --- the file's model ------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Approvers(_Model):
    """Who may decide. Nobody listed means anyone in the channel."""

    users: tuple[UserId, ...] = ()
    usergroups: tuple[UsergroupId, ...] = ()

    @property
    def is_open(self) -> bool:
        """Whether nobody is listed, so that anyone in the channel may decide."""
        return not self.users and not self.usergroups


class PolicySettings(_Model):
    """What the ``default`` section and every rule set (see ``bot.ladder`` for the timed keys)."""

    approvers: Approvers = Field(default_factory=Approvers)
    allow_self_approval: StrictBool = False
    """Whether the requester may decide on their own request (when otherwise allowed to)."""
    reason_required_on_deny: StrictBool = False
    quorum: int = Field(default=1, ge=1, le=20)
    """Distinct approvals needed; one deny ends the request."""
    low_risk: StrictBool = False
    """Only low-risk requests may be approved automatically on expiry."""
    response: ResponseShape = "record"
    """What the agent receives: the decision record, ``"y"``/``"n"`` (``yes_no``) or a boolean."""
    escalation: Escalation | None = None
    claim: Claim | None = None
    reminders: Reminders | None = None
    expiry: Expiry | None = None

    @model_validator(mode="after")
    def _auto_approve_only_low_risk(self) -> Self:
        if self.expiry is not None and self.expiry.outcome == "approve" and not self.low_risk:
            raise ValidationError.from_exception_data(
                type(self).__name__,
                [_error(("expiry", "outcome"), "'approve' on expiry needs 'low_risk: true' on the same rule")],
            )
        return self


class Policy(PolicySettings):
    """The settings that apply to one interrupt, under the name of the rule they come from."""

    name: StrictStr

    def summary(self) -> PolicySummary:
        """What an approval message records about this policy."""
        return PolicySummary(
            name=self.name,
            approver_users=self.approvers.users,
            approver_groups=self.approvers.usergroups,
            allow_self_approval=self.allow_self_approval,
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
            expire_after_s=self.expiry.after if self.expiry else None,
            expiry_outcome=self.expiry.outcome if self.expiry else None,
            response=self.response,
        )

    @classmethod
    def from_summary(cls, summary: PolicySummary) -> "Policy":
        """The policy an approval message recorded (so a later click is judged by the same rules)."""
        return cls(
            name=summary.name,
            approvers=Approvers(users=summary.approver_users, usergroups=summary.approver_groups),
            allow_self_approval=summary.allow_self_approval,
            reason_required_on_deny=summary.reason_required_on_deny,
        )

    def approvers_text(self) -> str:
        """Who may decide, in Slack mrkdwn: ``<@U1>, <@U2> or <!subteam^S1>``."""
        if self.approvers.is_open:
            return "anyone in the channel" if self.allow_self_approval else "anyone in the channel except the requester"
        mentions = [f"<@{user}>" for user in dict.fromkeys(self.approvers.users)]
        mentions += [f"<!subteam^{group}>" for group in dict.fromkeys(self.approvers.usergroups)]
        if len(mentions) == 1:
            return mentions[0]
        return f"{', '.join(mentions[:-1])} or {mentions[-1]}"


class Match(_Model):
    """What a rule applies to: tool names and/or interrupt names (at least one)."""

    tools: tuple[ToolName, ...] = ()
    interrupts: tuple[InterruptName, ...] = ()

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if not self.tools and not self.interrupts:
            raise PydanticCustomError("empty_match", "a rule must match at least one tool or interrupt name")
        return self


class Rule(Policy):
    """A named policy for the tools and interrupt names it matches."""

    name: RuleName
    match: Match


class PolicyBook(_Model):
    """A whole policy file: the default settings and the rules, in order."""

    default_settings: PolicySettings = Field(default_factory=PolicySettings, alias="default")
    rules: tuple[Rule, ...] = ()
    rotations: dict[StrictStr, Rotation] = Field(default_factory=dict)

    @classmethod
    def default(cls) -> "PolicyBook":
        """The built-in policy: anyone in the channel but the requester decides; no reason required."""
        return cls()

    @property
    def default_policy(self) -> Policy:
        """The policy that applies when no rule matches."""
        return Policy(name=DEFAULT_POLICY_NAME, **dict(self.default_settings))

    def for_call(self, *, tool: str | None, interrupt_name: str, batch: Sequence[str] = ()) -> Policy:
        """The policy for an interrupt: the first rule matching its tool, else ``interrupt_name``, else the default.

        Args:
            tool: The tool of the one call the interrupt guards, if it guards one.
            interrupt_name: The interrupt's name.
            batch: The tools of every call the interrupt guards, when it guards a batch: the
                first rule matching any of them applies (a batch holding a gated tool is never
                judged by the default).
        """
        tools = [tool] if tool is not None else list(batch)
        for rule in self.rules:
            if any(name in rule.match.tools for name in tools):
                return rule
        for rule in self.rules:
            if interrupt_name in rule.match.interrupts:
                return rule
        return self.default_policy

    def _unknown_rotations(self) -> list[InitErrorDetails]:
        errors = []
        places: list[tuple[tuple[int | str, ...], PolicySettings]] = [(("default",), self.default_settings)]
        places += [(("rules", index), rule) for index, rule in enumerate(self.rules)]
        for prefix, settings in places:
            for position, level in enumerate(_levels_of(settings)):
                name = level.targets.rotation
                if name is not None and name not in self.rotations:
                    loc = (*prefix, "escalation", "levels", position, "targets", "rotation")
                    known = ", ".join(sorted(self.rotations)) or "none defined"
                    errors.append(_error(loc, "unknown rotation '{name}' (rotations: {known})", name=name, known=known))
        return errors

    @model_validator(mode="after")
    def _no_overlaps(self) -> Self:
        errors: list[InitErrorDetails] = []
        first_named: dict[str, int] = {}
        for index, rule in enumerate(self.rules):
            first = first_named.setdefault(rule.name, index)
            if first != index:
                message = "rule name '{name}' is already used by rules[{first}]"
                errors.append(_error(("rules", index, "name"), message, name=rule.name, first=first))
        for key, noun in (("tools", "tool"), ("interrupts", "interrupt name")):
            first_matched: dict[str, int] = {}
            for index, rule in enumerate(self.rules):
                values: tuple[str, ...] = getattr(rule.match, key)
                for position, value in enumerate(values):
                    first = first_matched.setdefault(value, index)
                    loc = ("rules", index, "match", key, position)
                    if first != index:
                        message = "{noun} '{value}' is matched by both rule '{first}' and rule '{rule}'"
                        other = self.rules[first].name
                        errors.append(_error(loc, message, noun=noun, value=value, first=other, rule=rule.name))
                    elif values.index(value) != position:
                        errors.append(_error(loc, "{noun} '{value}' is listed twice", noun=noun, value=value))
        errors.extend(self._unknown_rotations())
        if errors:
            # Raised from a validator, a ValidationError keeps these precise locations.
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self


def _levels_of(settings: PolicySettings) -> tuple[Level, ...]:
    return settings.escalation.levels if settings.escalation else ()


def _error(loc: tuple[int | str, ...], template: str, **context: Any) -> InitErrorDetails:
    return InitErrorDetails(
        type=PydanticCustomError("policy", template, context), loc=loc, input=context.get("value", context.get("name"))
    )


# --- authorization ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Whether a user may decide on a request, and who may (for the message that says no)."""

    allowed: bool
    reason_code: Literal["allowed", "self_approval", "not_an_approver"]
    approvers_text: str


def authorize(
    policy: Policy, *, user_id: str, requester_id: str, group_members: Mapping[str, frozenset[str]]
) -> Verdict:
    """Whether ``user_id`` may approve or deny a request made by ``requester_id`` under ``policy``.

    The requester is refused unless the policy allows self-approval, even when listed as an
    approver. ``group_members`` maps each of the policy's user groups to its members; a group
    missing from it counts as empty (fails closed).
    """
    text = policy.approvers_text()
    if user_id == requester_id and not policy.allow_self_approval:
        return Verdict(False, "self_approval", text)
    approvers = policy.approvers
    if (
        approvers.is_open
        or user_id in approvers.users
        or any(user_id in group_members.get(group, frozenset()) for group in approvers.usergroups)
    ):
        return Verdict(True, "allowed", text)
    return Verdict(False, "not_an_approver", text)
