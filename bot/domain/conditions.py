"""Conditions on a tool call's input: the CEL expressions of a policy rule's ``match.when``.

CEL (Common Expression Language, through the maintained ``cel-python`` package) is safe to evaluate on what an
agent sends: no side effects, no loops beyond its macros, no access to anything but the names it is given. A
condition sees ``args`` (the call's input, a JSON object) and ``tool`` (its name), e.g.
``args.env == "prod" && args.replicas > 10``.

A condition is checked when the policy file loads (syntax, and no name but ``args``, ``tool`` and a macro's own
variable), so a typo such as ``arg.env`` is a start error, not a rule that silently never applies. A condition
that cannot be evaluated on a call (a field the input lacks, a value of the wrong type) or is not a boolean has
no answer: ``holds`` says so, and the policy decides which way that falls (see ``bot.domain.policy``).
"""

import functools
import json
from collections.abc import Mapping
from typing import Any, Final, Literal

import celpy
from celpy.adapter import json_to_cel
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError
from lark import Token, Tree
from pydantic_core import PydanticCustomError

NAMES: Final = frozenset({"args", "tool"})
_MACROS: Final = frozenset({"all", "exists", "exists_one", "map", "filter"})
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


def _names_in(tree: Tree[Any]) -> set[str]:
    return {str(token) for node in tree.iter_subtrees() if node.data == "ident" for token in node.children}


def _bound_in(tree: Tree[Any]) -> set[str]:
    """The variables macros bind (``exists(x, ...)`` binds ``x``)."""
    bound = set()
    for node in tree.iter_subtrees():
        if node.data != "member_dot_arg" or len(node.children) < 3:
            continue
        method, arguments = node.children[1], node.children[2]
        if isinstance(method, Token) and str(method) in _MACROS and isinstance(arguments, Tree):
            first = next(iter(arguments.children), None)
            if isinstance(first, Tree):
                bound |= _names_in(first)
    return bound
