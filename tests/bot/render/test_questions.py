"""A question's message and forms, as pure Block Kit: the controls its kind asks for, within Slack's limits, escaped."""

import json
from typing import Any

from agent.vended import AskedQuestion
from bot.domain.question_kinds import MAX_LABEL, answer_form, asked_question
from bot.domain.records import ApprovalRequest, Question
from bot.render import action_ids as ids
from bot.render.questions import answer_form_modal, question_actions, question_message
from tests.bot.render.test_blocks import decision, request


def asking(question: Question) -> ApprovalRequest:
    return request(interrupt_name="ask-user", tool=None, tool_input=None, reason=None, question=question)


def offering(options: list[Any], *, multiple: bool = False) -> ApprovalRequest:
    return asking(asked_question(AskedQuestion("Which?", options, multiple)))


def elements(request: ApprovalRequest) -> list[dict[str, Any]]:
    return list(question_actions(request)["elements"])


def test_one_of_up_to_five_options_is_a_button_each_then_discuss() -> None:
    shown = elements(offering(["a", "b", "c", "d", "e"]))
    assert [each["type"] for each in shown] == ["button"] * 6
    assert [each["action_id"] for each in shown] == [*(f"{ids.CHOOSE_PREFIX}{i}" for i in range(5)), ids.DISCUSS_ACTION]
    assert [ids.parse_choice_button_value(each["value"])[0] for each in shown[:5]] == [0, 1, 2, 3, 4]  # type: ignore[index]


def test_six_options_are_a_select_and_several_a_multi_select_each_with_send_answer() -> None:
    single = elements(offering([f"o{i}" for i in range(6)]))
    several = elements(offering(["a", "b"], multiple=True))
    assert [each["type"] for each in single] == ["static_select", "button", "button"]
    assert [each["type"] for each in several] == ["multi_static_select", "button", "button"]
    assert single[1]["action_id"] == several[1]["action_id"] == ids.SEND_CHOICE_ACTION
    assert [option["value"] for option in single[0]["options"]] == [str(i) for i in range(6)]


def test_a_hundred_options_of_75_characters_fit_the_select_and_the_message() -> None:
    labels = [f"{i:03d}" + "x" * (MAX_LABEL - 3) for i in range(100)]
    request = offering([{"label": label, "description": "d" * 75} for label in labels])
    [select, _send, _discuss] = elements(request)
    assert len(select["options"]) == 100
    assert all(len(option["text"]["text"]) <= 75 for option in select["options"])
    assert all(len(option["description"]["text"]) <= 75 for option in select["options"])
    assert all(len(option["value"]) <= 150 for option in select["options"])
    message = question_message(request)
    assert len(message["blocks"]) <= 50
    assert all(len(block.get("text", {}).get("text", "")) <= 3000 for block in message["blocks"])


def test_labels_and_descriptions_are_shown_escaped_with_hidden_characters_visible() -> None:
    request = offering(["<!channel>", {"label": "pay\u202egpj", "description": "*bold* <@U0EVIL>"}])
    message = question_message(request)
    buttons = [each["text"]["text"] for each in elements(request)[:2]]
    assert buttons == ["<!channel>", "pay⟨U+202E⟩gpj"]  # plain text: never a mention, hidden characters spelled
    mrkdwn = json.dumps([block for block in message["blocks"] if block["type"] == "section"], ensure_ascii=False)
    assert "&lt;@U0EVIL&gt;" in mrkdwn
    assert "&lt;!channel&gt;" in mrkdwn
    assert "<@U0EVIL>" not in mrkdwn
    assert "pay⟨U+202E⟩gpj" in mrkdwn


def test_an_answered_question_shows_the_answer_and_no_controls() -> None:
    for answer, expected in (
        (["eu-west-1", "<!here>"], "> • eu-west-1\n> • &lt;!here&gt;"),
        ({"note": "<@U0EVIL> `x`"}, '```{\n  "note": "&lt;@U0EVIL&gt; \'x\'"\n}```'),
        ("in *words*", "> in *words*"),
    ):
        message = question_message(offering(["a"]), decision=decision("answer", answer=answer))
        assert not [block for block in message["blocks"] if block["type"] == "actions"]
        assert message["blocks"][-1]["text"]["text"] == expected
        assert "Answered by <@U_OPS>" in json.dumps(message["blocks"])


def test_a_form_question_opens_the_edit_forms_fields_made_from_its_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "enum": ["eu", "us"]}, "count": {"type": "integer", "maximum": 3}},
        "required": ["region"],
    }
    request = asking(asked_question(AskedQuestion("How?", schema=schema)))
    [fill, discuss] = elements(request)
    assert (fill["action_id"], fill["text"]["text"], discuss["action_id"]) == (
        ids.ANSWER_ACTION,
        "Fill in",
        ids.DISCUSS_ACTION,
    )
    assert request.question is not None
    view = answer_form_modal(request, answer_form(request.question), private_metadata="m", external_id="e")
    inputs = [block for block in view["blocks"] if block["type"] == "input"]
    assert [(block["label"]["text"], block["element"]["type"], block["optional"]) for block in inputs] == [
        ("region", "static_select", False),
        ("count", "number_input", True),
    ]
    assert view["callback_id"] == ids.ANSWER_MODAL_CALLBACK


def test_a_question_stored_before_kinds_reads_and_shows_as_one_in_words() -> None:
    stored = (
        asking(Question(text="Which?"))
        .model_dump_json()
        .replace(',"kind":"text","options":[],"multiple":false,"other":false,"form":null,"problem":null', "")
    )
    assert '"question":{"text":"Which?"}' in stored
    old = ApprovalRequest.model_validate_json(stored)
    assert [each["action_id"] for each in elements(old)] == [ids.ANSWER_ACTION, ids.DISCUSS_ACTION]
