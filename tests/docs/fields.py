"""Tables of a pydantic model's fields: the settings (environment variables) and the policy file's keys.

A field's words are the docstring written under it in the model's class (or, for a section such as
``escalation``, its model's docstring); its type, allowed values and bounds come from its annotation.
"""

import dataclasses
import types
from collections.abc import Callable
from datetime import date, time
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from bot.domain.durations import Seconds
from bot.domain.slack_ids import ChannelId, UsergroupId, UserId
from tests.docs.markdown import attribute_docstrings, cell, code, first_paragraph, table

_NAMED: tuple[tuple[Any, str], ...] = (
    (Seconds, "duration"),
    (UserId, "user id"),
    (UsergroupId, "user group id"),
    (ChannelId, "channel id"),
)
"""Annotated types a reader knows by a name (a duration is written ``90``, ``"15m"`` or ``"1h30m"``)."""
_PLAIN: dict[Any, str] = {
    str: "text",
    bool: "boolean",
    int: "integer",
    float: "number",
    Path: "path",
    SecretStr: "secret",
    time: "time",
    date: "date",
}

_BOUNDS: dict[type, str] = {
    annotated_types.Ge: "at least {}",
    annotated_types.Gt: "more than {}",
    annotated_types.Le: "at most {}",
    annotated_types.Lt: "less than {}",
    annotated_types.MinLen: "length at least {}",
    annotated_types.MaxLen: "length at most {}",
}


def field_table(
    model: type[BaseModel],
    *,
    name: Callable[[str, FieldInfo], str],
    header: tuple[str, str, str, str] = ("key", "type", "default", "what"),
    fallback: Callable[[str], str] = lambda _name: "",
) -> str:
    """One row per field of ``model``, its own fields first; ``name`` spells a field as the reader writes it,
    ``fallback`` describes one (by that spelling) its class leaves undescribed."""
    rows = []
    for spelled, field, words in _described_fields(model, name=name, fallback=fallback):
        what = " ".join(part for part in (words, _limits(field)) if part)
        rows.append([code(spelled), _type_of(field.annotation, field.metadata), _default(field), cell(what)])
    return table(header, rows)


def undescribed(
    model: type[BaseModel], *, name: Callable[[str, FieldInfo], str], fallback: Callable[[str], str] = lambda _: ""
) -> list[str]:
    """The fields of ``model`` (spelled by ``name``) that neither the code nor ``fallback`` puts into words."""
    return [spelled for spelled, _field, words in _described_fields(model, name=name, fallback=fallback) if not words]


def _described_fields(
    model: type[BaseModel], *, name: Callable[[str, FieldInfo], str], fallback: Callable[[str], str]
) -> list[tuple[str, FieldInfo, str]]:
    """Each field of ``model``, its own first: as spelled, and its words (without its limits)."""
    docs = attribute_docstrings(model)
    described = []
    for field_name in _own_fields_first(model):
        field = model.model_fields[field_name]
        spelled = name(field_name, field)
        described.append((spelled, field, docs.get(field_name) or _section_words(field) or fallback(spelled)))
    return described


def _type_of(annotation: Any, metadata: list[Any]) -> str:
    """A field's type in a reader's words: ``list of user id``, ``duration``, ``section``."""
    for named, word in _NAMED:
        if annotation == named or (metadata and metadata == list(get_args(named)[1:])):
            return word
    origin, arguments = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        return " or ".join(_type_of(arm, []) for arm in arguments if arm is not type(None))
    if origin is Literal:
        return code(str(arguments[0])) if len(arguments) == 1 else "choice"  # one word is its own type: `never`
    if origin in (tuple, list):
        return f"list of {_type_of(arguments[0], [])}"
    if origin is dict:
        return f"map of {_type_of(arguments[0], [])} to {_type_of(arguments[1], [])}"
    if get_origin(annotation) is not None and hasattr(annotation, "__metadata__"):  # Annotated
        return _type_of(arguments[0], [])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section"
    return _PLAIN.get(annotation, getattr(annotation, "__name__", str(annotation)))


def environment_name(model: type[BaseModel]) -> Callable[[str, FieldInfo], str]:
    """How pydantic-settings names a field of ``model`` in the environment (its prefix, upper case)."""
    prefix = str(model.model_config.get("env_prefix", ""))

    def spelled(field_name: str, field: FieldInfo) -> str:
        alias = field.validation_alias
        return (alias if isinstance(alias, str) else f"{prefix}{field_name}").upper()

    return spelled


def file_key(field_name: str, field: FieldInfo) -> str:
    """How a policy file names a field (its alias, as ``default``)."""
    return field.alias or field_name


def _own_fields_first(model: type[BaseModel]) -> list[str]:
    """Field names in the order a reader meets them: the class's own, then each base's."""
    ordered: list[str] = []
    for klass in model.__mro__:
        for field_name in getattr(klass, "__annotations__", {}):
            if field_name in model.model_fields and field_name not in ordered:
                ordered.append(field_name)
    return ordered


def _section_words(field: FieldInfo) -> str:
    section = _model_of(field.annotation)
    return first_paragraph(section.__doc__) if section is not None else ""


def _model_of(annotation: Any) -> type[BaseModel] | None:
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
    if value is None or value is PydanticUndefined:
        return "unset"
    if isinstance(value, BaseModel) or value in ((), {}, []):
        return "none"
    if isinstance(value, bool):
        return code(str(value).lower())
    if isinstance(value, SecretStr):
        return "set"
    return code(str(value))


def _limits(field: FieldInfo) -> str:
    """What the type allows, when it says more than its words: the values of a ``Literal``, the bounds."""
    values = _literal_values(field.annotation)
    said = [f"One of {', '.join(code(str(value)) for value in values)}."] if len(values) > 1 else []
    bounds = [
        _BOUNDS[type(limit)].format(dataclasses.astuple(limit)[0]) for limit in field.metadata if type(limit) in _BOUNDS
    ]
    if bounds:
        said.append(f"{', '.join(bounds).capitalize()}.")
    return " ".join(said)


def _literal_values(annotation: Any) -> tuple[Any, ...]:
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return next((get_args(arm) for arm in get_args(annotation) if get_origin(arm) is Literal), ())
    return ()
