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

The same in TOML is ``[default]`` / ``[default.approvers]`` and ``[[rules]]`` / ``[rules.match]``.

Every key is checked: unknown keys, ids that are not Slack ids, duplicate rule names and a tool
(or interrupt name) listed by two rules are errors. ``load_policy`` reports them as one
``PolicyError`` naming the file, the line (exact for YAML, best effort for TOML), the field path
(``rules[1].approvers.users[0]``) and what is wrong.

Deciding who may answer is ``authorize``: pure, given the members of the listed user groups
(resolving those through Slack is the caller's job).
"""

import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Self, TypeAlias, get_args, get_origin

import yaml  # type: ignore[import-untyped]
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
    "PolicyError",
    "PolicyProblem",
    "PolicySettings",
    "Rule",
    "Verdict",
    "authorize",
    "load_policy",
]

DEFAULT_POLICY_NAME = "default"
"""The name of the policy that applies when no rule matches."""

_RULE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_SUFFIXES = {".yml": "yaml", ".yaml": "yaml", ".toml": "toml"}

_Loc: TypeAlias = tuple[int | str, ...]
_Locator: TypeAlias = Callable[[_Loc], int | None]


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

    def for_call(self, *, tool: str | None, interrupt_name: str) -> Policy:
        """The policy for an interrupt: the first rule matching ``tool``, else ``interrupt_name``, else the default."""
        if tool is not None:
            for rule in self.rules:
                if tool in rule.match.tools:
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


# --- loading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyProblem:
    """One thing wrong with a policy file."""

    message: str
    field: str | None = None
    """Where, as ``rules[1].approvers.users[0]``; ``None`` for the file as a whole."""
    line: int | None = None
    """1-based; ``None`` when unknown."""


class PolicyError(ValueError):
    """A policy file that cannot be used; the message has one line per problem.

    Each line reads ``<file>, line <n>, <field path>: <what is wrong>`` (line and field path when known).
    """

    def __init__(self, file: Path, problems: Sequence[PolicyProblem]) -> None:
        self.file = file
        self.problems = tuple(problems)
        super().__init__("\n".join(_format_problem(file, problem) for problem in self.problems))


def _format_problem(file: Path, problem: PolicyProblem) -> str:
    where = str(file)
    if problem.line is not None:
        where += f", line {problem.line}"
    if problem.field is not None:
        where += f", {problem.field}"
    return f"{where}: {problem.message}"


def load_policy(path: Path) -> PolicyBook:
    """Read and check a policy file (``.yml``, ``.yaml`` or ``.toml``); raise ``PolicyError`` if it is unusable."""
    path = Path(path)
    kind = _SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise PolicyError(path, [PolicyProblem(f"unknown policy file type '{path.suffix}'; use .yml, .yaml or .toml")])
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(path, [PolicyProblem("no such policy file")]) from None
    except UnicodeDecodeError as exc:
        raise PolicyError(path, [PolicyProblem(f"not UTF-8 text ({exc.reason} at byte {exc.start})")]) from None
    except OSError as exc:
        raise PolicyError(path, [PolicyProblem(f"cannot read the policy file: {exc.strerror or exc}")]) from None

    locate: _Locator
    if kind == "yaml":
        data, locate = _parse_yaml(path, text)
    else:
        data, locate = _parse_toml(path, text)
    if data is None or data == {}:
        raise PolicyError(path, [PolicyProblem("the policy file is empty (expected 'default' and/or 'rules')")])
    try:
        return PolicyBook.model_validate(data)
    except ValidationError as exc:
        raise PolicyError(path, [_problem(error, locate) for error in exc.errors()]) from None


def _problem(error: Any, locate: _Locator) -> PolicyProblem:
    loc: _Loc = tuple(error["loc"])
    return PolicyProblem(message=_message(error, loc), field=_field_path(loc), line=locate(loc))


def _field_path(loc: _Loc) -> str | None:
    if not loc:
        return None
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
    return path


def _describe(value: object) -> str:
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


_EXPECTED = {
    "model_type": "expected a mapping of keys",
    "model_attributes_type": "expected a mapping of keys",
    "dict_type": "expected a mapping of keys",
    "tuple_type": "expected a list",
    "list_type": "expected a list",
    "bool_type": "expected true or false",
    "string_type": "expected a string",
}


def _message(error: Any, loc: _Loc) -> str:
    kind = error["type"]
    if kind in _EXPECTED:
        return f"{_EXPECTED[kind]}, got {_describe(error['input'])}"
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        expected = f" (expected one of: {', '.join(allowed)})" if allowed else ""
        return f"unknown key '{loc[-1]}'{expected}"
    return str(error["msg"])


def _allowed_keys(loc: _Loc) -> list[str]:
    """The keys the model at ``loc`` accepts (by alias), for 'unknown key' messages."""
    current: Any = PolicyBook
    for part in loc:
        if isinstance(part, int):
            if get_origin(current) is not tuple:
                return []
            current = get_args(current)[0]
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        fields = {field.alias or name: field for name, field in current.model_fields.items()}
        if part not in fields:
            return []
        current = fields[part].annotation
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(field.alias or name for name, field in current.model_fields.items())
    return []


# YAML: parse once into a node tree (for lines), then construct the data from it.


def _parse_yaml(path: Path, text: str) -> tuple[Any, _Locator]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, lambda loc: None
        duplicates = list(_duplicate_keys(node))
        if duplicates:
            raise PolicyError(path, duplicates)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "syntax error"
        if exc.context:  # PyYAML's phrasing reads context first: "while parsing X (started at ...), expected Y"
            started = f" (started at line {exc.context_mark.line + 1})" if exc.context_mark is not None else ""
            problem = f"{exc.context}{started}, {problem}"
        line = mark.line + 1 if mark is not None else None
        raise PolicyError(path, [PolicyProblem(f"not valid YAML: {problem}", line=line)]) from None
    except yaml.YAMLError as exc:
        raise PolicyError(path, [PolicyProblem(f"not valid YAML: {exc}")]) from None
    finally:
        loader.dispose()
    return data, lambda loc: _yaml_line(node, loc)


def _duplicate_keys(root: Any) -> Iterator[PolicyProblem]:
    """PyYAML silently keeps the last of two equal keys; a policy file must not say two things."""
    seen: set[int] = set()
    pending = [(root, "")]
    while pending:
        node, path = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, Any] = {}
            for key, value in node.value:
                name = str(key.value)
                child = f"{path}.{name}" if path else name
                if name in first and name != "<<":
                    yield PolicyProblem(
                        f"duplicate key '{name}' (first at line {first[name].start_mark.line + 1})",
                        field=child,
                        line=key.start_mark.line + 1,
                    )
                first.setdefault(name, key)
                pending.append((value, child))
        elif isinstance(node, yaml.SequenceNode):
            pending.extend((item, f"{path}[{index}]") for index, item in enumerate(node.value))


def _yaml_line(root: Any, loc: _Loc) -> int | None:
    """The line of ``loc`` (the key's line for a mapping entry); the deepest existing node's line if it is missing."""
    node: Any = root
    line: int = root.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            entry = next(((key, value) for key, value in node.value if str(key.value) == str(part)), None)
            if entry is None:
                return line
            node, line = entry[1], entry[0].start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


# TOML: tomllib gives no positions, so map keys to lines by scanning table headers and key lines.

_TOML_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(
    r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*="
)


def _toml_key_parts(dotted: str) -> list[str]:
    return [part.strip().strip("\"'") for part in re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", dotted)]


def _parse_toml(path: Path, text: str) -> tuple[Any, _Locator]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # The message ends with "(at line N, column M)".
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        raise PolicyError(path, [PolicyProblem(f"not valid TOML: {exc}", line=line)]) from None
    lines = _toml_lines(text)
    return data, lambda loc: _toml_line(lines, loc)


def _toml_lines(text: str) -> dict[_Loc, int]:
    """Best effort: the line where each table and key is defined, with array-of-tables indices filled in."""
    found: dict[_Loc, int] = {}
    counts: dict[_Loc, int] = {}
    table: _Loc = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TOML_HEADER.match(line)
        if header:
            parts = _toml_key_parts(header.group(2))
            resolved: list[int | str] = []
            for index, part in enumerate(parts):
                resolved.append(part)
                prefix = tuple(resolved)
                if header.group(1) == "[[" and index == len(parts) - 1:
                    counts[prefix] = counts.get(prefix, -1) + 1
                    resolved.append(counts[prefix])
                elif prefix in counts:  # [rules.match] after [[rules]]: the latest rule
                    resolved.append(counts[prefix])
            table = tuple(resolved)
            found.setdefault(table, number)
            continue
        key = _TOML_KEY.match(line)
        if key:
            found.setdefault((*table, *_toml_key_parts(key.group(1))), number)
    return found


def _toml_line(lines: dict[_Loc, int], loc: _Loc) -> int | None:
    for end in range(len(loc), 0, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None
