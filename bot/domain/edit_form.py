"""The fields of the "Edit call" form, made from the tool's input schema (or its input), and reading them back.

One field per top-level key of the input: text for strings, a number for numbers and integers (with the schema's
bounds), a select for a string ``enum``, a checkbox for booleans, JSON for anything else. Without a schema each
key's kind follows its current value. An input Slack cannot hold in a form (too many keys, a text longer than an
input takes) is edited as one JSON text, or not at all when even that does not fit. What the person submits is
read back field by field (an error names the field), then checked against the whole schema.
"""

import json
import math
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import jsonschema
from referencing.exceptions import Unresolvable

from bot.domain.hidden_characters import reveal

MAX_FIELDS: Final = 40
"""A modal holds 100 blocks; a form of more keys is one JSON field."""
MAX_TEXT: Final = 3000
"""Slack's longest ``plain_text_input``."""
MAX_OPTIONS: Final = 100
MAX_OPTION_CHARS: Final = 75
MAX_OPTION_VALUE: Final = 150
WHOLE_INPUT: Final = ""
"""The name of the one field of a form that edits the whole input as JSON."""

Kind = Literal["text", "number", "integer", "select", "checkbox", "json"]


@dataclass(frozen=True)
class FormField:
    """One field: the input's key it edits, how, and what it holds now."""

    name: str
    kind: Kind
    required: bool
    initial: str | bool | None
    """The text shown (``None``: empty), or for a checkbox whether it is ticked."""
    description: str = ""
    options: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int = MAX_TEXT
    multiline: bool = False


@dataclass(frozen=True)
class EditForm:
    """The fields of one call's form, in order, and the schema the edited input must satisfy."""

    fields: tuple[FormField, ...]
    schema: dict[str, Any] | None = None
    original: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadBack:
    """A submitted form: the edited input, or the errors by field index."""

    input: dict[str, Any] | None
    errors: dict[int, str]


def edit_form(tool_input: Any, schema: dict[str, Any] | None) -> EditForm | None:
    """The form that edits ``tool_input`` (``None``: it cannot be edited in Slack)."""
    if not isinstance(tool_input, dict):
        return None
    usable = _usable_schema(schema)
    properties = usable.get("properties") if usable else None
    properties = properties if isinstance(properties, dict) else {}
    required = usable.get("required") if usable else None
    required_names = {name for name in required if isinstance(name, str)} if isinstance(required, list) else set()
    names = [*(name for name in properties if isinstance(name, str)), *(k for k in tool_input if k not in properties)]
    if 0 < len(names) <= MAX_FIELDS:  # no key at all: the whole input, as JSON (a form needs a field)
        fields = tuple(
            _field(name, tool_input.get(name), properties.get(name), name in required_names, present=name in tool_input)
            for name in names
        )
        if all(_fits(each) for each in fields):
            return EditForm(fields, usable, dict(tool_input))
    whole = FormField(WHOLE_INPUT, "json", True, _json_text(tool_input), multiline=True)
    return EditForm((whole,), usable, dict(tool_input)) if _fits(whole) else None


def read_back(form: EditForm, submitted: list[str | bool | None]) -> ReadBack:
    """The edited input from the values submitted for ``form``'s fields (in order), or what is wrong with them."""
    errors: dict[int, str] = {}
    edited: dict[str, Any] = {}
    for index, (each, value) in enumerate(zip(form.fields, submitted, strict=True)):
        try:
            present, parsed = _parse(each, value, form.original)
        except ValueError as problem:
            errors[index] = str(problem)
            continue
        if each.name == WHOLE_INPUT:
            if not isinstance(parsed, dict):
                errors[index] = "The input must be a JSON object."
                continue
            edited = parsed
        elif present:
            edited[each.name] = parsed
    if errors:
        return ReadBack(None, errors)
    if form.schema is not None:
        for invalid in _schema_errors(form.schema, edited):
            errors.setdefault(_field_of(form, invalid), _said(invalid))
    return ReadBack(None if errors else edited, errors)


def _usable_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The schema, if it describes an object and is a valid JSON Schema (else the input's own kinds are used)."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except (jsonschema.SchemaError, RecursionError):
        return None
    return schema


def _field(name: str, value: Any, spec: Any, required: bool, *, present: bool) -> FormField:
    spec = spec if isinstance(spec, dict) else {}
    description = spec.get("description") if isinstance(spec.get("description"), str) else ""
    declared = spec.get("type")
    kind: Kind
    if (
        isinstance(spec.get("enum"), list)
        and _select_options(spec["enum"]) is not None
        and value in (None, *spec["enum"])
    ):
        options = _select_options(spec["enum"]) or ()
        return FormField(name, "select", required, value if isinstance(value, str) else None, description, options)
    if declared == "boolean" or (declared is None and isinstance(value, bool)):
        kind = "checkbox" if value is None or isinstance(value, bool) else "json"
        return FormField(name, kind, False, bool(value) if kind == "checkbox" else _json_text(value), description)
    if declared in ("number", "integer") or (declared is None and _is_number(value)):
        integer = declared == "integer" or (declared is None and isinstance(value, int))
        if value is None or _is_number(value):
            # Slack opens no form holding a field of crossed bounds: it is shown unbounded (the schema check still
            # refuses every value).
            crossed = crossed_bounds(spec) is not None
            minimum = None if crossed else _bound(spec.get("minimum"))
            maximum = None if crossed else _bound(spec.get("maximum"))
            return FormField(
                name,
                "integer" if integer else "number",
                required,
                None if value is None else _number_text(value),
                description,
                minimum=minimum,
                maximum=maximum,
            )
    if (declared == "string" or declared is None) and (isinstance(value, str) or (value is None and declared)):
        limit = spec.get("maxLength")
        max_length = min(limit, MAX_TEXT) if isinstance(limit, int) and limit > 0 else MAX_TEXT
        multiline = isinstance(value, str) and ("\n" in value or len(value) > 150)
        return FormField(name, "text", required, value, description, max_length=max_length, multiline=multiline)
    initial = _json_text(value) if present else None
    return FormField(name, "json", required, initial, description, multiline=True)


def _select_options(enum: list[Any]) -> tuple[str, ...] | None:
    if not 0 < len(enum) <= MAX_OPTIONS or not all(isinstance(each, str) for each in enum):
        return None
    # An option's text is shown with its hidden characters spelled out: cut to fit, two could read the same.
    if any(not each or len(reveal(each)) > MAX_OPTION_CHARS or len(each) > MAX_OPTION_VALUE for each in enum):
        return None
    return tuple(dict.fromkeys(enum))


def _fits(each: FormField) -> bool:
    return not isinstance(each.initial, str) or len(each.initial) <= min(each.max_length, MAX_TEXT)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number_text(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value)


def _bound(value: Any) -> float | None:
    return float(value) if _is_number(value) else None


def crossed_bounds(spec: Any) -> tuple[float, float] | None:
    """A number property's ``minimum`` and ``maximum`` when the minimum is above the maximum (no number fits)."""
    if not isinstance(spec, dict):
        return None
    low, high = _real(spec.get("minimum")), _real(spec.get("maximum"))
    return (low, high) if low is not None and high is not None and low > high else None


def _real(value: Any) -> float | None:
    """``value`` as a float when JSON would read it as a number (infinities too: no number fits above one)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _parse(each: FormField, value: str | bool | None, original: dict[str, Any]) -> tuple[bool, Any]:
    """Whether the field's key is in the edited input, and its value there."""
    if each.kind == "checkbox":
        return True, bool(value)
    text = value if isinstance(value, str) else ""
    if text == "" and each.kind != "text":
        if each.required:
            raise ValueError("This field is required.")
        return False, None
    if each.kind == "text":
        if text == "" and each.name not in original and not each.required:
            return False, None  # left empty, as it was absent
        return True, text
    if each.kind == "select":
        if text not in each.options:
            raise ValueError("Choose one of the options.")
        return True, text
    if each.kind in ("number", "integer"):
        return True, _number(each, text)
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError) as problem:
        raise ValueError(f"Not valid JSON: {problem}") from None


def _number(each: FormField, text: str) -> int | float:
    try:
        number: int | float = int(text) if each.kind == "integer" else float(text)
    except ValueError:
        raise ValueError("Enter a whole number." if each.kind == "integer" else "Enter a number.") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError("Enter a number.")
    if isinstance(number, float) and number.is_integer() and "." not in text and "e" not in text.lower():
        number = int(number)
    if each.minimum is not None and number < each.minimum:
        raise ValueError(f"At least {_number_text(_whole(each.minimum))}.")
    if each.maximum is not None and number > each.maximum:
        raise ValueError(f"At most {_number_text(_whole(each.maximum))}.")
    return number


def _whole(bound: float) -> int | float:
    return int(bound) if bound.is_integer() else bound


def _schema_errors(schema: dict[str, Any], edited: dict[str, Any]) -> list[jsonschema.ValidationError]:
    validator = jsonschema.validators.validator_for(schema)(schema)
    try:
        return sorted(validator.iter_errors(edited), key=lambda problem: list(problem.absolute_path))
    except (Unresolvable, RecursionError):
        return []  # a schema that refers outside itself: the fields' own checks stand


def _field_of(form: EditForm, problem: jsonschema.ValidationError) -> int:
    """The field an error of the whole input belongs to (the first field when it is about no one key)."""
    path = list(problem.absolute_path)
    name = path[0] if path else _missing_key(problem)
    for index, each in enumerate(form.fields):
        if each.name == name:
            return index
    return 0


def _missing_key(problem: jsonschema.ValidationError) -> str | None:
    if problem.validator == "required" and isinstance(problem.instance, dict):
        missing = [name for name in problem.validator_value if name not in problem.instance]
        return str(missing[0]) if missing else None
    return None


def _said(problem: jsonschema.ValidationError) -> str:
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in problem.absolute_path)
    message = problem.message if len(problem.message) <= 200 else problem.message[:199] + "…"
    return f"{where.lstrip('.')}: {message}" if where else message
