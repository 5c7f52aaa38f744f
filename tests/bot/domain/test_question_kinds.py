"""What an agent offers with a question: checked when it is asked, every refusal naming the field."""

from typing import Any

import pytest

from agent.vended import AskedQuestion
from bot.domain.question_kinds import QuestionError, answer_form, asked_question
from bot.domain.records import QuestionOption


def test_labels_and_labelled_objects_are_options_in_the_agents_order() -> None:
    question = asked_question(AskedQuestion("Which?", ["eu", {"label": "us", "description": "Virginia"}], True))
    assert (question.kind, question.multiple) == ("choice", True)
    assert question.options == (QuestionOption(label="eu"), QuestionOption(label="us", description="Virginia"))


def test_a_question_without_options_or_schema_is_asked_in_words() -> None:
    assert asked_question(AskedQuestion("Which?")).kind == "text"


@pytest.mark.parametrize(
    ("options", "multiple", "schema", "named"),
    [
        ([], False, None, "options: must be a non-empty list"),
        ("eu", False, None, "options: must be a non-empty list"),
        ([str(i) for i in range(101)], False, None, "options: at most 100"),
        (["eu", 3], False, None, "options[1]: must be a label"),
        (["eu", "  "], False, None, "options[1].label: must be a non-blank string"),
        (["eu", "x" * 76], False, None, "options[1].label: at most 75 characters (Slack's limit), got 76"),
        # Shown with its hidden character spelled out (⟨U+200B⟩), it is 78 long: cut, it would look like another.
        (["eu", "x" * 70 + "\u200b"], False, None, "options[1].label: at most 75 characters as shown (hidden"),
        ([{"label": "eu", "description": "d" * 76}], False, None, "options[0].description: at most 75"),
        ([{"label": "eu", "extra": 1}], False, None, "options[0]: must be a label, or an object"),
        (["eu", "us", "eu"], False, None, 'options[2].label: "eu" is offered twice'),
        (["eu"], "yes", None, "multiple: must be true or false"),
        (None, True, None, "multiple: only a question with options"),
        (["eu"], False, {"type": "object"}, "options, schema: a question offers options or a form, not both"),
    ],
)
def test_options_slack_cannot_show_are_refused_naming_the_field(
    options: Any, multiple: Any, schema: Any, named: str
) -> None:
    with pytest.raises(QuestionError) as refused:
        asked_question(AskedQuestion("Which?", options, multiple, schema))
    assert str(refused.value).startswith(named)


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ([], "schema: must be a JSON Schema object"),
        ({"type": "array"}, 'schema.type: must be "object"'),
        ({"type": "object", "properties": {"n": {"type": "nonsense"}}}, "schema.properties.n.type: "),
        ({"type": "object"}, "schema.properties: a form needs at least one property"),
        (
            {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(41)}},
            "schema.properties: at most 40",
        ),
        ({"type": "object", "properties": {"n": {"type": "string", "description": "d" * 9000}}}, "schema: longer than"),
        # Short, but JSON can spell what no UTF-8 text holds: said as such, not as "longer than".
        ({"type": "object", "properties": {"n\ud800": {"type": "string"}}}, "schema: holds a lone surrogate"),
        # Valid JSON Schema, but no number fits it, and Slack refuses a number field whose min_value is above max_value.
        (
            {"type": "object", "properties": {"n": {"type": "integer", "minimum": 9, "maximum": 1}}},
            "schema.properties.n.minimum: 9 is above the maximum, 1: no number fits",
        ),
    ],
)
def test_a_schema_the_edit_form_cannot_make_fields_of_is_refused_naming_the_field(schema: Any, named: str) -> None:
    with pytest.raises(QuestionError) as refused:
        asked_question(AskedQuestion("How?", schema=schema))
    assert str(refused.value).startswith(named)


def test_a_schemas_form_has_the_edit_forms_fields_and_checks() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "enum": ["eu", "us"]},
            "replicas": {"type": "integer", "maximum": 9},
        },
        "required": ["region", "replicas"],
    }
    question = asked_question(AskedQuestion("How?", schema=schema))
    assert (question.kind, question.form) == ("form", schema)
    form = answer_form(question)
    assert [(each.name, each.kind, each.required) for each in form.fields] == [
        ("region", "select", True),
        ("replicas", "integer", True),
    ]
