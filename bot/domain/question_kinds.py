"""What a question offers besides words: options to choose, or a form to fill in; checked when it is asked.

An agent asks with its interrupt's reason (``agent.vended.question_of``): ``{"question": ..., "options": [...],
"multiple": bool}`` or ``{"question": ..., "schema": {...}}``. What Slack cannot show as the agent asked it (an
option's text longer than an option holds, more options than a select lists, a schema the edit form's generator
cannot make fields of) is refused with the field named (``QuestionError``); the form of a ``form`` question is the
edit form's (``bot.domain.edit_form``): the same field kinds and the same checks under each field.
"""

import json
from typing import Any, Final

import jsonschema

from agent.vended import AskedQuestion
from bot.domain.edit_form import MAX_FIELDS, WHOLE_INPUT, EditForm, crossed_bounds, edit_form
from bot.domain.errors import SignoffError
from bot.domain.hidden_characters import reveal
from bot.domain.records import Question, QuestionOption
from bot.domain.storable_json import bounded_json

MAX_OPTIONS: Final = 100
"""Slack's longest select; a question offers no more."""
MAX_LABEL: Final = 75
"""Slack's longest option text (and button text)."""
MAX_DESCRIPTION: Final = 75
"""Slack's longest option description."""
MAX_BUTTONS: Final = 5
"""A question of one choice among at most this many options shows a button per option; more, a select."""
MAX_SCHEMA_CHARS: Final = 8_000
"""The longest form schema kept (as JSON): a schema cut short would describe another answer."""


class QuestionError(SignoffError, ValueError):
    """What an agent offered with a question cannot be shown; the message names the field (``options[2].label``)."""


def asked_question(asked: AskedQuestion) -> Question:
    """The question to store for ``asked``: its text bounded, its options or form checked.

    Raises:
        QuestionError: The options or the schema cannot be offered as given.
    """
    text = str(bounded_json(asked.text))
    if asked.options is not None and asked.schema is not None:
        raise QuestionError("options, schema: a question offers options or a form, not both")
    if asked.multiple is not False and asked.options is None:
        raise QuestionError("multiple: only a question with options lets several be chosen")
    if asked.other is not False and asked.options is None:
        raise QuestionError("other: only a question with options offers an answer in words besides them")
    if asked.options is not None:
        if not isinstance(asked.multiple, bool):
            raise QuestionError("multiple: must be true or false")
        if not isinstance(asked.other, bool):
            raise QuestionError("other: must be true or false")
        options = _options(asked.options)
        return Question(text=text, kind="choice", options=options, multiple=asked.multiple, other=asked.other)
    if asked.schema is not None:
        form_schema = _schema(asked.schema)
        return Question(text=text, kind="form", form=form_schema)
    return Question(text=text)


def question_in_words(asked: AskedQuestion, problem: QuestionError) -> Question:
    """The question asked in words instead, saying what of its options or form could not be used."""
    return Question(text=str(bounded_json(asked.text)), problem=str(problem))


def answer_form(question: Question) -> EditForm:
    """The form a ``form`` question is answered with (its fields made as the edit form's are)."""
    form = edit_form({}, question.form) if question.form is not None else None
    if form is None:  # checked when asked: only a record written by hand can get here
        raise QuestionError("schema: no form can be made of it")
    return form


def _options(given: Any) -> tuple[QuestionOption, ...]:
    if not isinstance(given, list) or not given:
        raise QuestionError("options: must be a non-empty list")
    if len(given) > MAX_OPTIONS:
        raise QuestionError(f"options: at most {MAX_OPTIONS} (Slack's longest select), got {len(given)}")
    options: list[QuestionOption] = []
    for index, given_option in enumerate(given):
        where = f"options[{index}]"
        each = {"label": given_option} if isinstance(given_option, str) else given_option
        if not isinstance(each, dict) or set(each) - {"label", "description"}:
            raise QuestionError(f"{where}: must be a label, or an object with a label and a description")
        description = each.get("description")
        if description is not None:
            description = _text(description, f"{where}.description", MAX_DESCRIPTION)
        label = _text(each.get("label"), f"{where}.label", MAX_LABEL)
        if len(shown := reveal(label)) > MAX_LABEL:  # cut to fit, two labels could look the same
            raise QuestionError(
                f"{where}.label: at most {MAX_LABEL} characters as shown (hidden characters spelled out, as "
                f"⟨U+200B⟩), got {len(shown)}"
            )
        options.append(QuestionOption(label=label, description=description))
    seen: set[str] = set()
    for index, option in enumerate(options):
        if option.label in seen:
            raise QuestionError(f"options[{index}].label: {json.dumps(option.label)} is offered twice")
        seen.add(option.label)
    return tuple(options)


def _text(value: Any, where: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise QuestionError(f"{where}: must be a non-blank string")
    if len(value) > limit:
        raise QuestionError(f"{where}: at most {limit} characters (Slack's limit), got {len(value)}")
    return value


def _schema(given: Any) -> dict[str, Any]:
    if not isinstance(given, dict):
        raise QuestionError("schema: must be a JSON Schema object")
    if _has_lone_surrogate(given):
        raise QuestionError("schema: holds a lone surrogate (\\ud800 to \\udfff): not Unicode text")
    if bounded_json(given, max_chars=MAX_SCHEMA_CHARS) != given:
        raise QuestionError(f"schema: longer than {MAX_SCHEMA_CHARS} characters as JSON, or nested too deeply")
    if given.get("type", "object") != "object":
        raise QuestionError('schema.type: must be "object" (the answer is an object, one field per property)')
    try:
        jsonschema.validators.validator_for(given).check_schema(given)
    except jsonschema.SchemaError as invalid:
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in invalid.absolute_path)
        raise QuestionError(f"schema{where}: {_short(invalid.message)}") from None
    except RecursionError:
        raise QuestionError("schema: nested too deeply") from None
    properties = given.get("properties")
    if not isinstance(properties, dict) or not properties:
        raise QuestionError("schema.properties: a form needs at least one property")
    if len(properties) > MAX_FIELDS:
        raise QuestionError(f"schema.properties: at most {MAX_FIELDS} (a form's fields), got {len(properties)}")
    form = edit_form({}, given)
    if form is None or any(each.name == WHOLE_INPUT for each in form.fields):
        raise QuestionError("schema.properties: no form can be made of them")
    for each in form.fields:  # the form shows such a field unbounded, but no answer would fit the schema
        crossed = crossed_bounds(properties.get(each.name)) if each.kind in ("integer", "number") else None
        if crossed is not None:
            raise QuestionError(
                f"schema.properties.{each.name}.minimum: {_bound(crossed[0])} is above the maximum, "
                f"{_bound(crossed[1])}: no number fits"
            )
    return given


def _bound(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a text of ``value`` (a key too) holds a lone surrogate: JSON can spell one, no UTF-8 text holds it."""
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return True
    except RecursionError:  # nested past what any check walks: bounded_json says so next
        return False
    return False


def _short(message: str) -> str:
    return message if len(message) <= 200 else message[:199] + "…"
