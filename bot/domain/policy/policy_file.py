"""Reading a policy file (YAML or TOML) into a ``bot.domain.policy.policy.PolicyBook``, with errors a person can act on.

Every problem is reported with the file, the line (exact for YAML, best effort for TOML), the
field path (``rules[1].approvers.users[0]``) and what is wrong, all at once in one ``PolicyError``.
"""

import re
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias, get_args, get_origin

import yaml  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError

from bot.domain.errors import SetupError
from bot.domain.policy.policy import PolicyBook

__all__ = ["PolicyError", "PolicyProblem", "load_policy"]

_SUFFIXES = {".yml": "yaml", ".yaml": "yaml", ".toml": "toml"}
_Loc: TypeAlias = tuple[int | str, ...]
_Locator: TypeAlias = Callable[[_Loc], int | None]


@dataclass(frozen=True)
class PolicyProblem:
    """One thing wrong with a policy file."""

    message: str
    field: str | None = None
    """Where, as ``rules[1].approvers.users[0]``; ``None`` for the file as a whole."""
    line: int | None = None
    """1-based; ``None`` when unknown."""


class PolicyError(SetupError, ValueError):
    """A policy file that cannot be used; the message has one line per problem.

    Each line reads ``<file>, line <n>, <field path>: <what is wrong>`` (line and field path when known).
    """

    def __init__(self, file: Path, problems: Sequence[PolicyProblem]) -> None:
        """Keep the file and its problems; the message reads one line per problem."""
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
