"""Conditions on a tool call's input: the CEL expressions of a policy rule's ``match.when``.

CEL (Common Expression Language, through the maintained ``cel-python`` package) is safe to evaluate on what an
agent sends: no side effects, no loops beyond its macros, no access to anything but the names it is given. A
condition sees ``args`` (the call's input, a JSON object) and ``tool`` (its name), e.g.
``args.env == "prod" && args.replicas > 10``.

A condition is checked when the policy file loads (syntax; no name but ``args``, ``tool`` and a macro's own
variable; no function the evaluator lacks; each macro in its form), so a typo such as ``arg.env`` or
``startswith`` is a start error, not a rule that silently never applies. A condition
that cannot be evaluated on a call (a field the input lacks, a value of the wrong type) or is not a boolean has
no answer: ``holds`` says so, and the policy decides which way that falls (see ``bot.domain.policy.policy``).
"""

import difflib
import functools
import json
from collections.abc import Mapping
from typing import Any, Final, Literal, NamedTuple

import celpy
import re2  # type: ignore[import-untyped]  # cel-python's regex engine: matches runs on it
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, base_functions
from lark import Token, Tree
from pydantic_core import PydanticCustomError

NAMES: Final = frozenset({"args", "tool"})

# The evaluator's own table, but its operators (``_+_``, ``_in_``): each is called ``f(x)`` or ``x.f()`` alike.
FUNCTIONS: Final = frozenset(name for name in base_functions if name.isidentifier() and not name.startswith("_"))


class Macro(NamedTuple):
    """How a macro is written: after a value (``list.all(...)``) or called (``has(...)``), and its arguments."""

    after_a_value: bool
    variables: int
    """How many of its first arguments name a variable the rest may read."""
    arguments: int
    usage: str


# celpy's evaluator spells its macros out in its code, with no table to read: test_conditions.py evaluates each.
MACROS: Final[Mapping[str, Macro]] = {
    "all": Macro(True, 1, 2, "list.all(x, condition)"),
    "exists": Macro(True, 1, 2, "list.exists(x, condition)"),
    "exists_one": Macro(True, 1, 2, "list.exists_one(x, condition)"),
    "filter": Macro(True, 1, 2, "list.filter(x, condition)"),
    "map": Macro(True, 1, 2, "list.map(x, expression)"),
    "reduce": Macro(True, 2, 4, "list.reduce(total, x, start, expression)"),
    "min": Macro(True, 0, 0, "list.min()"),
    "has": Macro(False, 0, 1, "has(args.field)"),
    "dyn": Macro(False, 0, 1, "dyn(expression)"),
}
MAX_LENGTH: Final = 2000
MAX_INPUT_BYTES: Final = 64 * 1024

Holds = Literal[True, False, "error"]


def checked(source: str) -> str:
    """``source`` if it is a condition that can apply, else a validation error naming what is wrong."""
    if len(source) > MAX_LENGTH:
        raise PydanticCustomError("condition", "a condition is at most {limit} characters", {"limit": MAX_LENGTH})
    try:
        tree = _environment().compile(source)
    except CELParseError as error:
        where = f"line {error.line}, column {error.column}" if error.line is not None else "somewhere"
        first = str(error.args[0]).strip().splitlines()[0] if error.args else ""
        raise PydanticCustomError(
            "condition", "not a CEL expression (at {where} of it: {near})", {"where": where, "near": first}
        ) from None
    _check_calls(tree)
    unknown = sorted(_names_in(tree) - NAMES - _bound_in(tree))
    if unknown:
        raise PydanticCustomError(
            "condition",
            "unknown name {names} (a condition sees only args, the call's input, and tool, its name)",
            {"names": ", ".join(repr(name) for name in unknown)},
        )
    return source


def holds(source: str, *, tool: str, args: Mapping[str, Any]) -> Holds:
    """Whether the condition holds for this call: ``True``, ``False``, or ``"error"`` when it has no answer.

    An input over ``MAX_INPUT_BYTES`` (as JSON) gets no answer: a macro over a huge list would hold a worker or a
    web thread for seconds, and a condition is a policy question, not a data job. The stricter reading applies.
    """
    try:
        if len(json.dumps(args, default=str)) > MAX_INPUT_BYTES:
            return "error"
    except (TypeError, ValueError, RecursionError):
        return "error"
    try:
        activation = {"args": json_to_cel(dict(args)), "tool": celpy.celtypes.StringType(tool)}
        value = _program(source).evaluate(activation)
    except (CELEvalError, TypeError, ValueError, KeyError, ArithmeticError, RecursionError):
        return "error"
    if isinstance(value, celpy.celtypes.BoolType):
        return bool(value)
    return "error"  # an error value, or not a boolean: no answer either


@functools.cache
def _environment() -> celpy.Environment:
    return celpy.Environment()


@functools.lru_cache(maxsize=256)
def _program(source: str) -> celpy.Runner:
    return _environment().program(_environment().compile(source))


def _check_calls(tree: Tree[Any]) -> None:
    """Refuse a call the evaluator cannot run: it would have no answer on every call, silently."""
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg":
            name, arguments, after_a_value = node.children[1], node.children[2:], True
        elif node.data in ("ident_arg", "dot_ident_arg"):
            name, arguments, after_a_value = node.children[0], node.children[1:], False
        else:
            continue
        # celpy runs no call with a leading dot (``.size(x)``): it is no function of its table.
        called = f".{name}" if node.data == "dot_ident_arg" else str(name)
        given = list(arguments[0].children) if arguments and isinstance(arguments[0], Tree) else []
        macro = MACROS.get(called)
        if macro is not None and macro.after_a_value == after_a_value:
            if len(given) != macro.arguments or any(_bare_name(each) is None for each in given[: macro.variables]):
                raise _misused(called, macro)
            if called == "has" and not _is_field(given[0]):
                raise _misused(called, macro)  # CEL's has() tests a field; the evaluator takes ``has(args)`` as true
        elif called in FUNCTIONS:
            if called == "matches":
                _check_pattern(given[0] if after_a_value else given[1] if len(given) > 1 else None)
            continue
        elif macro is not None:
            raise _misused(called, macro)  # written in the other place: ``exists(list, x, ...)``, ``x.has()``
        else:
            raise _unknown_function(called)


def _check_pattern(argument: Tree[Any] | Token | None) -> None:
    """Refuse a pattern written in the condition that RE2 (``matches``' engine) cannot read: no call would match."""
    literal = _string_literal(argument)
    if literal is None:
        return  # a pattern read from the call: its error is that call's alone
    pattern = str(_environment().program(_environment().compile(literal)).evaluate({}))
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own line on stderr, outside the log's format
    try:
        re2.compile(pattern, options)
    except re2.error as error:
        why = error.args[0].decode("utf-8", "replace") if error.args and isinstance(error.args[0], bytes) else ""
        raise PydanticCustomError(
            "condition", "matches: {pattern} is no pattern RE2 reads ({why})", {"pattern": literal, "why": why}
        ) from None


def _string_literal(tree: Tree[Any] | Token | None) -> str | None:
    """The CEL text of ``tree`` if it is nothing but a string literal, else None."""
    while isinstance(tree, Tree) and len(tree.children) == 1:
        tree = tree.children[0]
    return str(tree) if isinstance(tree, Token) and tree.type == "STRING_LIT" else None


def _misused(called: str, macro: Macro) -> PydanticCustomError:
    return PydanticCustomError(
        "condition", "macro {name} is written {usage}", {"name": repr(called), "usage": macro.usage}
    )


def _unknown_function(called: str) -> PydanticCustomError:
    known = sorted(FUNCTIONS | set(MACROS))
    near = [name for name in known if name.lower() == called.lstrip(".").lower()]
    near = near or difflib.get_close_matches(called, known, n=1)
    if near:
        return PydanticCustomError(
            "condition", "unknown function {name} (did you mean {near}?)", {"name": repr(called), "near": repr(near[0])}
        )
    return PydanticCustomError(
        "condition",
        "unknown function {name} (a condition can call {known})",
        {"name": repr(called), "known": ", ".join(known)},
    )


def _sole(tree: Tree[Any] | Token, kind: str) -> Tree[Any] | None:
    """The node of ``kind`` that ``tree`` is nothing but (the grammar wraps an expression in one-child nodes)."""
    while isinstance(tree, Tree) and tree.data != kind and len(tree.children) == 1:
        tree = tree.children[0]
    return tree if isinstance(tree, Tree) and tree.data == kind else None


def _bare_name(tree: Tree[Any] | Token) -> str | None:
    """The name ``tree`` is if it is nothing but a name (a macro's variable), else None."""
    name = _sole(tree, "ident")
    return None if name is None else str(name.children[0])


def _is_field(tree: Tree[Any] | Token) -> bool:
    """Whether ``tree`` is nothing but a field of a value (``args.path``, ``args.a.b``)."""
    return _sole(tree, "member_dot") is not None


def _names_in(tree: Tree[Any]) -> set[str]:
    # ``.name`` reads the same variables from the root scope.
    return {
        str(token) for node in tree.iter_subtrees() if node.data in ("ident", "dot_ident") for token in node.children
    }


def _bound_in(tree: Tree[Any]) -> set[str]:
    """The variables macros bind (``exists(x, ...)`` binds ``x``); ``_check_calls`` saw that each is a name."""
    bound = set()
    for node in tree.iter_subtrees():
        if node.data != "member_dot_arg" or len(node.children) < 3 or not isinstance(node.children[2], Tree):
            continue
        macro = MACROS.get(str(node.children[1]))
        if macro is not None:
            bound |= {_bare_name(argument) or "" for argument in node.children[2].children[: macro.variables]}
    return bound - {""}
