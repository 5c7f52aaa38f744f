"""Tools: the ``@tool`` decorator, tool specs and the context a tool may ask for.

A tool is a typed function. Its spec (name, description, JSON schema of its input) comes from
the signature and the Google-style docstring; its input is validated with pydantic before it
runs, so a model that sends a bad argument gets an error result naming the field.
A parameter annotated ``ToolContext`` is injected and left out of the schema.

``@tool(idempotent=True)`` declares that running a call twice does no harm (a read, or a write
keyed by ``ToolContext.idempotency_key``): a call whose worker stopped before its result was
recorded is then simply run again. Any other such call is asked about again (see ``agent.agent``).
"""

import inspect
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypedDict, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agent.ids import Scope
from agent.interrupting import Interruptible
from state.interrupt import InterruptException, _InterruptState
from state.shapes import ToolResult, ToolUse

_ARG_LINE = re.compile(r"^\s{2,}(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


class ToolSpec(TypedDict):
    """What the model is told about a tool (Converse ``toolSpec``)."""

    name: str
    description: str
    inputSchema: dict[str, Any]


@dataclass
class ToolContext(Interruptible):
    """What a running tool may use besides its arguments.

    Attributes:
        tool_use: The call being executed.
        agent: The agent running it.
        idempotency_key: Stable for this call across crashes and resumes (derived from the
            session and the toolUseId): pass it to external systems to make retries harmless.
    """

    tool_use: ToolUse
    agent: Any
    idempotency_key: str
    _interrupt_state: _InterruptState = field(default_factory=_InterruptState, repr=False)
    _interrupt_scope: Scope = field(default="tool_call", init=False, repr=False)

    def __post_init__(self) -> None:
        """Scope this context's interrupts to its call."""
        self._interrupt_tool_use_id = self.tool_use["toolUseId"]


def idempotency_key(session_id: str | None, tool_use_id: str) -> str:
    """Return the idempotency key of one tool call."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"signoff:{session_id or ''}:{tool_use_id}"))


class AgentTool:
    """A callable tool with its spec; build one with ``@tool``.

    Attributes:
        idempotent: Running a call again is harmless (see the module docstring).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        idempotent: bool = False,
    ):
        """Derive the spec and the input model from ``func``."""
        self.func = func
        self.name = name or func.__name__
        self.idempotent = idempotent
        key = _derivation_key(func, self.name, description)
        derived = _DERIVED.get(key) if key is not None else None
        if derived is None:
            derived = _derive(func, self.name, description)
            if key is not None and len(_DERIVED) < _DERIVED_KEPT:
                _DERIVED[key] = derived
        self._input_model, self.spec, self._context_param = derived

    def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Run the tool for ``tool_use``; failures become error results.

        Raises:
            InterruptException: The tool asked a human who has not answered yet.
        """
        tool_use_id = tool_use["toolUseId"]
        try:
            arguments = self._input_model.model_validate(tool_use["input"])
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "input"
            return error_result(tool_use_id, f"invalid input: field=<{where}> | {first['msg']}")
        kwargs = {name: getattr(arguments, name) for name in type(arguments).model_fields}
        if self._context_param is not None:
            kwargs[self._context_param] = context
        try:
            value = self.func(**kwargs)
        except InterruptException:
            raise
        except Exception as error:  # boundary: a tool's failure, whatever it is, is reported to the model, not raised
            return error_result(tool_use_id, f"{self.name} failed: {type(error).__name__}: {error}")
        return _as_result(tool_use_id, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (handy in tests)."""
        return self.func(*args, **kwargs)


@overload
def tool(func: Callable[..., Any], /) -> AgentTool: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None, idempotent: bool = False
) -> Callable[[Callable[..., Any]], AgentTool]: ...
def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    idempotent: bool = False,
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Turn a typed function into an ``AgentTool`` (``@tool``, ``@tool(name=...)``, ``@tool(idempotent=True)``)."""
    if func is not None:
        return AgentTool(func)
    return lambda wrapped: AgentTool(wrapped, name=name, description=description, idempotent=idempotent)


_Derived = tuple[type[BaseModel], ToolSpec, str | None]
_DERIVED: dict[tuple[Any, ...], _Derived] = {}
_DERIVED_KEPT: Final = 4096
"""Tools built per agent (closures over its data) share their code: their input model and spec are made once."""


def _derivation_key(func: Callable[..., Any], name: str, description: str | None) -> tuple[Any, ...] | None:
    """What the input model and spec of ``func`` depend on, or ``None`` when that cannot be a key."""
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    key = (
        code,
        func.__module__,
        func.__doc__,
        name,
        description,
        func.__defaults__,
        tuple(sorted((func.__kwdefaults__ or {}).items())),
        tuple(func.__annotations__.items()),
    )
    try:
        hash(key)
    except TypeError:  # an unhashable default value: derive it every time
        return None
    return key


def _derive(func: Callable[..., Any], name: str, description: str | None) -> _Derived:
    """The input model, the spec and the name of the ``ToolContext`` parameter (if any) of ``func``."""
    summary, arg_docs = _parse_docstring(inspect.getdoc(func) or "")
    context_param: str | None = None
    fields: dict[str, Any] = {}
    hints = get_type_hints(func)
    for param in inspect.signature(func).parameters.values():
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            context_param = param.name
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=arg_docs.get(param.name)))
    input_model: type[BaseModel] = create_model(f"{name}_input", __config__=ConfigDict(extra="forbid"), **fields)
    schema = input_model.model_json_schema()
    schema.pop("title", None)
    spec: ToolSpec = {"name": name, "description": description or summary or name, "inputSchema": {"json": schema}}
    return input_model, spec, context_param


def error_result(tool_use_id: str, text: str) -> ToolResult:
    """Return an error result carrying ``text``."""
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}


def _as_result(tool_use_id: str, value: Any) -> ToolResult:
    """Wrap a return value as Strands does: a ready result as is, anything else as JSON text."""
    if isinstance(value, dict) and {"status", "content"} <= value.keys():
        return {"toolUseId": tool_use_id, "status": value["status"], "content": value["content"]}
    if isinstance(value, str):
        text = value
    elif isinstance(value, BaseModel):
        text = value.model_dump_json()
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(value)
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": text}]}


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary paragraph and ``Args:`` descriptions."""
    summary_lines: list[str] = []
    args: dict[str, str] = {}
    section = "summary"
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.endswith(":") and stripped[:-1] in {"Args", "Arguments", "Returns", "Raises", "Yields"}:
            section = stripped[:-1]
            current = None
            continue
        if section == "summary":
            if not stripped and summary_lines:
                section = "body"
            elif stripped:
                summary_lines.append(stripped)
        elif section in {"Args", "Arguments"}:
            match = _ARG_LINE.match(line)
            if match and len(line) - len(line.lstrip()) <= 4:
                current = match.group(1).lstrip("*")
                args[current] = match.group(2).strip()
            elif current and stripped:
                args[current] = f"{args[current]} {stripped}".strip()
    return " ".join(summary_lines), args
