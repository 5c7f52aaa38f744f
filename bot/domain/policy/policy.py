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
        response: yes_no            # what the agent receives: record, yes_no or boolean
      - name: big-prod-scale
        match:
          tools: [scale_service]
          when: 'args.env == "prod" && args.replicas > 10'   # CEL, on the call's input (bot.domain.policy.conditions)
        tier: deny                  # ask (default) | allow: runs without asking | deny: refused, never asked
        message: Scaling production past 10 replicas needs a change ticket.
      - name: deploys
        match: {tools: [deploy]}
        edits: other_approver       # allowed (default) | forbidden | other_approver: the editor cannot approve it

The same in TOML is ``[default]`` / ``[default.approvers]`` and ``[[rules]]`` / ``[rules.match]``.

Every key is checked: unknown keys, ids that are not Slack ids, duplicate rule names, a condition that
does not compile or names anything but ``args`` and ``tool``, and a tool (or interrupt name) listed by a
rule after one that takes all its calls (no ``when``) are errors. Reading a file (and reporting its errors with
their lines) is ``bot.domain.policy.policy_file.load_policy``; the timed keys are in ``bot.domain.policy.ladder``.

Deciding who may answer is the decide script's (``bot.store.scripts.decide``, the one judge), by the policy's
summary stored with the request. What one rule sets, and how the policies of a batch's
calls combine, is ``bot.domain.policy.policy_rules``.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from pydantic import Field, StrictStr, ValidationError, model_validator
from pydantic_core import InitErrorDetails

from bot.domain.policy import conditions
from bot.domain.policy.ladder import Expiry, Level
from bot.domain.policy.oncall import Rotation
from bot.domain.policy.policy_rules import (
    DEFAULT_POLICY_NAME,
    Policy,
    PolicyModel,
    PolicySettings,
    Rule,
    file_error,
    strictest,
)

__all__ = ["PolicyBook", "Weighed"]


@dataclass(frozen=True)
class Weighed:
    """One rule weighed for a call: what its condition said (``None``: it has none) and whether it applies."""

    rule: Rule
    held: conditions.Holds | None
    applies: bool


class PolicyBook(PolicyModel):
    """A whole policy file: the default settings and the rules, in order."""

    default_settings: PolicySettings = Field(default_factory=PolicySettings, alias="default")
    rules: tuple[Rule, ...] = ()
    rotations: dict[StrictStr, Rotation] = Field(default_factory=dict)

    @classmethod
    def default(cls) -> "PolicyBook":
        """The built-in policy: anyone in the channel but the requester decides; no reason required."""
        return cls()

    def with_default_expiry(self, after_s: int) -> "PolicyBook":
        """This book, each rule (and the default section) that sets no ``expiry`` ending as expired after ``after_s``.

        ``DEFAULT_EXPIRY``: no request waits forever unless its rule says ``expiry: never``.
        """
        default = Expiry(after=after_s, outcome="deny")
        return self.model_copy(
            update={
                "default_settings": self.default_settings.or_expiring(default),
                "rules": tuple(rule.or_expiring(default) for rule in self.rules),
            }
        )

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
            policy = self.rule_for(tool, tool_input) or self._for_interrupt_name(interrupt_name)
            # A trust lets every later call of the tool run unasked, so no rule is weighed for them: offered only
            # where one rule takes every call of the tool, never where a call could fall to a stricter one.
            return policy if self._one_rule_for(tool) else policy.model_copy(update={"trust": False})
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
        """Where a request for ``tool`` that names no channel is posted (HTTP API).

        The ``channel`` of the first rule listing it without a condition (a rule with one cannot route), else of the
        interrupt name's rule, else the default's; ``None`` when nothing routes it.
        """
        rule = next((rule for rule in self.rules if tool in rule.match.tools and rule.match.when is None), None)
        return (rule or self._for_interrupt_name(interrupt_name)).channel or self.default_policy.channel

    def rule_for(self, tool: str, tool_input: Any) -> "Rule | None":
        """The rule for this call: the first listing ``tool`` whose condition holds (or that has none).

        Unless a rule before it whose condition has no answer for this input is stricter (see ``weigh``).
        """
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

    def _one_rule_for(self, tool: str) -> bool:
        """Whether every call of ``tool`` gets one rule: the first listing it has no condition, or none lists it."""
        first = next((rule for rule in self.rules if tool in rule.match.tools), None)
        return first is None or first.match.when is None

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
                    errors.append(
                        file_error(loc, "unknown rotation '{name}' (rotations: {known})", name=name, known=known)
                    )
        return errors

    @model_validator(mode="after")
    def _no_overlaps(self) -> Self:
        errors: list[InitErrorDetails] = []
        first_named: dict[str, int] = {}
        for index, rule in enumerate(self.rules):
            first = first_named.setdefault(rule.name, index)
            if first != index:
                message = "rule name '{name}' is already used by rules[{first}]"
                errors.append(file_error(("rules", index, "name"), message, name=rule.name, first=first))
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
                        errors.append(file_error(loc, "{noun} '{value}' is listed twice", noun=noun, value=value))
                    elif taker is not None:
                        message = "{noun} '{value}' is matched by both rule '{first}' and rule '{rule}'"
                        other = self.rules[taker].name
                        errors.append(file_error(loc, message, noun=noun, value=value, first=other, rule=rule.name))
                    if rule.match.when is None:
                        taking_all.setdefault(value, index)
        errors.extend(self._unknown_rotations())
        if errors:
            # Raised from a validator, a ValidationError keeps these precise locations.
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self


def _key_of(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _levels_of(settings: PolicySettings) -> tuple[Level, ...]:
    return settings.escalation.levels if settings.escalation else ()
