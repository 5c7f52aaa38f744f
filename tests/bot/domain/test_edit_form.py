"""The edit form from a tool's schema (or its input alone), reading it back, and what changed between inputs."""

from typing import Any

import pytest

from bot.domain.edit_form import MAX_FIELDS, MAX_TEXT, WHOLE_INPUT, edit_form, read_back
from bot.domain.edits import input_changes
from bot.render import action_ids as ids

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "env": {"type": "string", "enum": ["staging", "prod"], "description": "Where."},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 50},
        "ratio": {"type": "number"},
        "dry_run": {"type": "boolean"},
        "notes": {"type": "string", "maxLength": 200},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["env", "replicas"],
    "additionalProperties": False,
}
INPUT = {"env": "staging", "replicas": 3, "ratio": 0.5, "dry_run": False, "notes": "hi", "labels": {"a": "b"}}


def _values(**changed: Any) -> list[str | bool | None]:
    form = edit_form(INPUT, SCHEMA)
    assert form is not None
    shown = [each.initial for each in form.fields]
    return [changed.get(each.name, value) for each, value in zip(form.fields, shown, strict=True)]


def test_each_schema_type_gets_its_own_field() -> None:
    form = edit_form(INPUT, SCHEMA)
    assert form is not None
    assert [(each.name, each.kind, each.required) for each in form.fields] == [
        ("env", "select", True),
        ("replicas", "integer", True),
        ("ratio", "number", False),
        ("dry_run", "checkbox", False),
        ("notes", "text", False),
        ("labels", "json", False),
    ]
    env, replicas, *_rest, notes, _labels = form.fields
    assert (env.options, env.initial, env.description) == (("staging", "prod"), "staging", "Where.")
    assert (replicas.minimum, replicas.maximum, replicas.initial) == (1, 50, "3")
    assert notes.max_length == 200


def test_reading_back_the_form_as_shown_gives_the_input_back() -> None:
    form = edit_form(INPUT, SCHEMA)
    assert form is not None
    assert read_back(form, _values()).input == INPUT


@pytest.mark.parametrize(
    ("changed", "field", "problem"),
    [
        ({"replicas": "2.5"}, 1, "Enter a whole number."),
        ({"replicas": "0"}, 1, "At least 1."),
        ({"replicas": "51"}, 1, "At most 50."),
        ({"replicas": ""}, 1, "This field is required."),
        ({"ratio": "nan"}, 2, "Enter a number."),
        ({"env": "qa"}, 0, "Choose one of the options."),
        ({"labels": "{"}, 5, "Not valid JSON"),
        ({"labels": '{"a": 1}'}, 5, "labels.a: 1 is not of type 'string'"),
        ({"notes": "x" * 201}, 4, "notes: "),
    ],
)
def test_a_wrong_value_is_refused_under_its_own_field(changed: dict[str, Any], field: int, problem: str) -> None:
    form = edit_form(INPUT, SCHEMA)
    assert form is not None
    read = read_back(form, _values(**changed))
    assert read.input is None
    assert list(read.errors) == [field]
    assert read.errors[field].startswith(problem)


def test_without_a_schema_each_key_follows_its_value() -> None:
    form = edit_form({"n": 2, "f": 1.5, "on": True, "s": "x", "l": [1]}, None)
    assert form is not None
    assert [each.kind for each in form.fields] == ["integer", "number", "checkbox", "text", "json"]


def test_an_input_too_wide_or_empty_is_one_json_field_and_one_too_long_has_no_form() -> None:
    wide = {f"k{index}": index for index in range(MAX_FIELDS + 1)}
    form = edit_form(wide, None)
    assert form is not None
    assert [each.name for each in form.fields] == [WHOLE_INPUT]
    assert read_back(form, ['{"k0": 7}']).input == {"k0": 7}
    assert read_back(form, ["[1]"]).errors == {0: "The input must be a JSON object."}
    empty = edit_form({}, None)
    assert empty is not None
    assert [each.name for each in empty.fields] == [WHOLE_INPUT]
    assert edit_form({"s": "x" * (MAX_TEXT * 2)}, None) is None
    assert edit_form(["not", "an", "object"], None) is None


def test_changes_name_each_leaf_that_differs() -> None:
    before = {"a": 1, "b": {"c": [1, 2], "d": "x"}, "gone": True, "flag": 1}
    after = {"a": 1, "b": {"c": [1, 3], "d": "x"}, "new key": None, "flag": True}
    assert [(c.path, c.kind, c.before, c.after) for c in input_changes(before, after)] == [
        ("b.c[1]", "changed", 2, 3),
        ("gone", "removed", True, None),
        ("flag", "changed", 1, True),  # a number edited into a boolean is a change, though 1 == True
        ('"new key"', "added", None, None),
    ]


def test_a_button_names_the_input_it_shows_and_older_buttons_still_parse() -> None:
    digest = "ab" * 32
    assert ids.parse_button(ids.button_value("3-abc", "T:C:1.2", digest)) == ("3-abc", "T:C:1.2", digest)
    assert ids.parse_button(ids.button_value("3-abc", "T:C:1.2")) == ("3-abc", "T:C:1.2", "")
    assert ids.parse_button("3-abc") == ("3-abc", None, "")
    assert ids.parse_grant_button_value(ids.grant_button_value(900, "3-abc", "T:C:1.2", digest)) == (
        900,
        "3-abc",
        "T:C:1.2",
        digest,
    )


def test_crossed_bounds_are_left_off_the_field_slack_would_refuse_to_open() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 9, "maximum": 1}}}
    form = edit_form({"n": 3}, schema)
    assert form is not None
    (n,) = form.fields
    assert (n.kind, n.minimum, n.maximum) == ("integer", None, None)
