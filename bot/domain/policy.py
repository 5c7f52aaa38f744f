"""The approval policy: who may approve or deny which agent call, read from a YAML or TOML file.

A policy file has a ``default`` section and an ordered list of ``rules``; a rule applies to the
tools and/or interrupt names it lists. For an interrupt, the first rule listing its tool wins,
else the first rule listing its interrupt name, else the default. An interrupt guarding a batch
of calls gets every call's policy at once, combined into the strictest (``PolicyBook.for_call``)::

    default:                        # applies when no rule matches
      approvers: {}                 # nobody listed: anyone in the channel (but the requester)
      allow_self_approval: false
      allow_external: false         # people of other workspaces (Slack Connect) may not decide
      reason_required_on_deny: false
    rules:
      - name: production-changes
        match: {tools: [restart_service, rollback_deploy]}
        approvers: {users: [U012AB3CD], usergroups: [S0614TZR7]}
        reason_required_on_deny: true
        response: yes_no            # what the agent receives: record (default), yes_no or boolean
      - name: big-prod-scale
        match:
          tools: [scale_service]
          when: 'args.env == "prod" && args.replicas > 10'   # CEL, on the call's input (bot.domain.conditions)
        tier: deny                  # ask (default) | allow: runs without asking | deny: refused, never asked
        message: Scaling production past 10 replicas needs a change ticket.
      - name: deploys
        match: {tools: [deploy]}
        edits: other_approver       # allowed (default) | forbidden | other_approver: the editor cannot approve it

The same in TOML is ``[default]`` / ``[default.approvers]`` and ``[[rules]]`` / ``[rules.match]``.

Every key is checked: unknown keys, ids that are not Slack ids, duplicate rule names, a condition that
does not compile or names anything but ``args`` and ``tool``, and a tool (or interrupt name) listed by a
rule after one that takes all its calls (no ``when``) are errors. Reading a file (and reporting its errors with
their lines) is ``bot.domain.policy_file.load_policy``; the timed keys are in ``bot.domain.ladder``.

Deciding who may answer is ``authorize``: pure, given the members of the listed user groups
(resolving those through Slack is the caller's job).
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
from bot.domain import conditions
from bot.domain.grants import GrantTerms
from bot.domain.ladder import Claim, Escalation, Expiry, Level, Reminders
from bot.domain.oncall import Rotation
from bot.domain.patterns import NAME_PATTERN, published, whole_match
from bot.domain.records import ApproverSet, LevelRecord, PolicySummary
from bot.domain.slack_ids import ChannelId, UsergroupId, UserId

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
    """What the ``default`` section and every rule set (see ``bot.domain.ladder`` for the timed keys)."""

    approvers: Approvers = Field(default_factory=Approvers)
    allow_self_approval: StrictBool = False
    """Whether the requester may decide on their own request (when otherwise allowed to)."""
    allow_external: StrictBool = False
    """Whether people of another workspace (Slack Connect) may decide, when otherwise allowed to."""
    reason_required_on_deny: StrictBool = False
    quorum: int = Field(default=1, ge=1, le=20)
    """Distinct approvals needed; one deny ends the request."""
    low_risk: StrictBool = False
    """Only low-risk requests may be approved automatically on expiry."""
    response: ResponseShape = "record"
    """What the agent receives: the decision record, ``"y"``/``"n"`` (``yes_no``) or a boolean."""
    edits: Edits = "allowed"
    """Whether an approver may edit the call before approving it (``other_approver``: someone else approves it)."""
    channel: ChannelId | None = None
    """Where a request made through the HTTP API for a matching tool is posted when it names no channel."""
    escalation: Escalation | None = None
    claim: Claim | None = None
    reminders: Reminders | None = None
    expiry: Expiry | None = None
    grants: GrantTerms | None = None
    """Standing approvals offered with each request ("Approve + allow 1h"); none unless listed."""

    @model_validator(mode="after")
    def _auto_approve_only_low_risk(self) -> Self:
        errors = []
        if self.expiry is not None and self.expiry.outcome == "approve" and not self.low_risk:
            errors.append(_error(("expiry", "outcome"), "'approve' on expiry needs 'low_risk: true' on the same rule"))
        if self.grants is not None and self.quorum > 1:
            # One person cannot stand in for the several approvals every call needs.
            errors.append(_error(("grants",), "a rule needing a quorum of several cannot offer standing approvals"))
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self


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

    @property
    def usergroups(self) -> tuple[str, ...]:
        """Every user group whose members matter to ``authorize``."""
        groups = [*self.approvers.usergroups, *(group for extra in self.also_approvers for group in extra.usergroups)]
        return tuple(dict.fromkeys(groups))

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
            expire_after_s=self.expiry.after if self.expiry else None,
            expiry_outcome=self.expiry.outcome if self.expiry else None,
            response=self.response,
            tier=self.tier,
            message=self.message,
            grant_durations=self.grants.durations if self.grants and self.tier == "ask" else (),
            grant_scope=self.grants.scope if self.grants else "requester",
            edits=self.edits,
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


class Match(_Model):
    """What a rule applies to: tool names and/or interrupt names (at least one), and for tools a condition."""

    tools: tuple[ToolName, ...] = ()
    interrupts: tuple[InterruptName, ...] = ()
    when: Condition | None = None
    """A CEL condition on the call (``args``, its input; ``tool``, its name): the rule applies only where it holds."""

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if not self.tools and not self.interrupts:
            raise PydanticCustomError("empty_match", "a rule must match at least one tool or interrupt name")
        if self.when is not None and self.interrupts:
            raise PydanticCustomError(
                "when_on_interrupts", "a condition ('when') reads a call's input: a rule with one matches tools only"
            )
        return self


class Rule(Policy):
    """A named policy for the tools and interrupt names it matches."""

    name: RuleName
    match: Match

    @model_validator(mode="after")
    def _conditions_decide_not_route(self) -> Self:
        errors = []
        if self.match.when is not None and self.channel is not None:
            # Where a request goes must not hang on its input: the API's document says which tools need a channel.
            errors.append(_error(("channel",), "a rule with a condition ('when') cannot route: set channel elsewhere"))
        if self.grants is not None and self.tier != "ask":
            errors.append(_error(("grants",), "standing approvals are offered where people decide: tier ask only"))
        if self.message is not None and self.tier != "deny":
            errors.append(_error(("message",), "a message is what a 'deny' rule tells the agent: set tier: deny"))
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self


@dataclass(frozen=True)
class Weighed:
    """One rule weighed for a call: what its condition said (``None``: it has none) and whether it applies."""

    rule: Rule
    held: conditions.Holds | None
    applies: bool


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

    def for_call(
        self,
        *,
        tool: str | None,
        interrupt_name: str,
        batch: Sequence[str] = (),
        tool_input: Any = None,
        batch_inputs: Sequence[Any] = (),
    ) -> Policy:
        """The policy for an interrupt: the first rule matching its tool, else ``interrupt_name``, else the default.

        Args:
            tool: The tool of the one call the interrupt guards, if it guards one.
            interrupt_name: The interrupt's name.
            batch: The tools of every call the interrupt guards, when it guards a batch. One answer
                covers them all, so it must satisfy each call's own policy: the policies of the
                calls are combined into the strictest (``strictest``), named after them all.
            tool_input: The input of ``tool``'s call (rules with a condition read it).
            batch_inputs: The inputs of the batch's calls, in its order (empty: not known).
        """
        if tool is not None:
            calls = [(tool, tool_input)]
        else:
            inputs = list(batch_inputs) if len(batch_inputs) == len(batch) else [None] * len(batch)
            calls = list(
                {(name, _key_of(given)): (name, given) for name, given in zip(batch, inputs, strict=True)}.values()
            )
        by_name = self._for_interrupt_name(interrupt_name)
        if not calls:
            return by_name
        applying = [self.rule_for(name, given) or by_name for name, given in calls]
        # Rules in file order, each once: the combined name and ties do not depend on the batch's order.
        ordered = sorted({policy.name: policy for policy in applying}.values(), key=self._position)
        return ordered[0] if len(ordered) == 1 else strictest(ordered)

    def channel_for(self, tool: str | None, interrupt_name: str) -> str | None:
        """Where a request for ``tool`` that names no channel is posted (HTTP API): the ``channel`` of the first
        rule listing it without a condition (a rule with one cannot route), else of the interrupt name's rule,
        else the default's; ``None`` when nothing routes it."""
        rule = next((rule for rule in self.rules if tool in rule.match.tools and rule.match.when is None), None)
        return (rule or self._for_interrupt_name(interrupt_name)).channel or self.default_policy.channel

    def rule_for(self, tool: str, tool_input: Any) -> "Rule | None":
        """The rule for this call: the first listing ``tool`` whose condition holds (or that has none), unless a
        rule before it whose condition has no answer for this input is stricter (see ``weigh``)."""
        applying = [entry.rule for entry in self.weigh(tool, tool_input) if entry.applies]
        return next((rule for rule in applying if rule.tier == "deny"), applying[0] if applying else None)

    def weigh(self, tool: str, tool_input: Any) -> list["Weighed"]:
        """The rules listing ``tool``, in order, up to the first that certainly applies (``policy check``).

        A condition without an answer (a field the input lacks, a value of another type: the agent chooses
        both) is read the stricter way: such an ``allow`` rule does not apply; such an ``ask`` or ``deny`` rule
        does, and the rules after it are weighed too, so an input shaped to leave one condition unanswered never
        escapes a ``deny`` rule that follows.
        """
        args = tool_input if isinstance(tool_input, dict) else {}
        weighed = []
        for rule in self.rules:
            if tool not in rule.match.tools:
                continue
            held = None if rule.match.when is None else conditions.holds(rule.match.when, tool=tool, args=args)
            applies = held is None or held is True or (held == "error" and rule.tier != "allow")
            weighed.append(Weighed(rule, held, applies))
            if held is None or held is True:
                break
        return weighed

    def _for_interrupt_name(self, interrupt_name: str) -> Policy:
        found = next((rule for rule in self.rules if interrupt_name in rule.match.interrupts), None)
        return found or self.default_policy

    def _position(self, policy: Policy) -> int:
        names = [rule.name for rule in self.rules]
        return names.index(policy.name) if policy.name in names else len(names)

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
            # A rule with a condition leaves the calls it does not hold for to the rules after it: only a rule
            # without one takes every call of its tools, and a later rule listing one of them would never apply.
            taking_all: dict[str, int] = {}
            for index, rule in enumerate(self.rules):
                values: tuple[str, ...] = getattr(rule.match, key)
                for position, value in enumerate(values):
                    loc = ("rules", index, "match", key, position)
                    taker = taking_all.get(value)
                    if values.index(value) != position:
                        errors.append(_error(loc, "{noun} '{value}' is listed twice", noun=noun, value=value))
                    elif taker is not None:
                        message = "{noun} '{value}' is matched by both rule '{first}' and rule '{rule}'"
                        other = self.rules[taker].name
                        errors.append(_error(loc, message, noun=noun, value=value, first=other, rule=rule.name))
                    if rule.match.when is None:
                        taking_all.setdefault(value, index)
        errors.extend(self._unknown_rotations())
        if errors:
            # Raised from a validator, a ValidationError keeps these precise locations.
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
        expiry=_strictest_expiry([policy.expiry for policy in policies]),
        tier=_strictest_tier(policies),
        edits=max((policy.edits for policy in policies), key=_EDITS_STRICTNESS.index),
        message=next((policy.message for policy in policies if policy.tier == "deny"), None),
    )
    lists = [listed for policy in restricted for listed in (policy.approvers, *policy.also_approvers)]
    combined._also_approvers = tuple(listed for listed in dict.fromkeys(lists[1:]) if listed != lists[0])
    return combined


def _strictest_tier(policies: Sequence[Policy]) -> Tier:
    """Refused if any call is, run without asking only if every call may, else asked."""
    tiers = {policy.tier for policy in policies}
    return "deny" if "deny" in tiers else "allow" if tiers == {"allow"} else "ask"


def _key_of(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


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
    approver. A policy combining several rules (a batch) needs ``user_id`` in each of its approver
    lists. ``group_members`` maps each of the policy's user groups (``policy.usergroups``) to its
    members; a group missing from it counts as empty (fails closed).
    """
    text = policy.approvers_text()
    if user_id == requester_id and not policy.allow_self_approval:
        return Verdict(False, "self_approval", text)
    if all(
        approvers.is_open
        or user_id in approvers.users
        or any(user_id in group_members.get(group, frozenset()) for group in approvers.usergroups)
        for approvers in (policy.approvers, *policy.also_approvers)
    ):
        return Verdict(True, "allowed", text)
    return Verdict(False, "not_an_approver", text)
