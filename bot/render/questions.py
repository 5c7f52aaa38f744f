"""A question as Block Kit: its message (asked, then answered or not) and the form that answers it.

Pure, like ``bot.render.blocks``: the message keeps the approval message's block ids, so every reader of a
message's live controls (``blocks.approval_id_shown``) reads a question's the same way.
"""

from typing import Any

from bot.domain.edit_form import EditForm
from bot.domain.progress import Progress
from bot.domain.question_kinds import MAX_BUTTONS, MAX_DESCRIPTION, MAX_LABEL, MAX_OPTIONS
from bot.domain.records import ApprovalRequest, Decision, Question
from bot.render import blocks, controls, edits
from bot.render.action_ids import (
    ANSWER_ACTION,
    ANSWER_BLOCK,
    ANSWER_INPUT,
    ANSWER_MODAL_CALLBACK,
    ANSWER_OTHER_ACTION,
    CHOICE_SELECT,
    CHOOSE_PREFIX,
    DISCUSS_ACTION,
    SEND_CHOICE_ACTION,
    button_value,
    choice_button_value,
)
from bot.render.safe_text import clip_plain
from bot.render.texts import approval_request, questions


def question_message(
    request: ApprovalRequest, *, decision: Decision | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """The question's message: ``{"text": fallback, "blocks": [...]}`` for chat.postMessage / chat.update.

    Unanswered, it ends with Answer / Discuss buttons; once answered (or expired) the buttons are replaced by the
    outcome and the answer the agent received.
    """
    approval_id = blocks.checked_approval_id(request.approval_id)
    shown = [
        {"type": "header", "text": blocks.plain_text(clip_plain(questions.question_header(request), 150))},
        blocks.section(questions.question_intro(request)),
        blocks.section(questions.question_text(request)),
    ]
    if blocks.has_hidden_characters(request):
        shown.append(blocks.context(approval_request.HIDDEN_CHARACTERS_WARNING))
    asked = request.question
    if asked is not None and asked.problem is not None:
        shown.append(blocks.context(questions.not_offered(asked.problem)))
    if decision is None and asked is not None:
        listed = questions.options_listed(asked) if _as_buttons(asked) else None
        if listed is not None:
            shown.append(blocks.section(listed))
        shown.append(blocks.context(questions.how_to_answer(asked, by_reply=request.client is None)))
    facts = [questions.who_answers(request.policy), approval_request.requested_at(request.created_at)]
    if decision is None:
        if request.expires_at is not None:
            facts.append(approval_request.expires(request.expires_at))
        shown.append(blocks.context(*facts))
        if progress is not None and progress.level:
            shown.append(blocks.context(approval_request.escalation_level(progress.level)))
        shown.append(question_actions(request))
    else:
        shown.append(blocks.context(*facts))
        shown.append(
            {**blocks.section(questions.answer_status(decision)), "block_id": blocks.decision_block_id(approval_id)}
        )
        quote = questions.answer_quote(decision)
        if quote is not None:
            shown.append(blocks.section(quote))
    return {"text": questions.question_fallback(request, decision), "blocks": shown}


def question_actions(request: ApprovalRequest) -> dict[str, Any]:
    """The live controls of a question, then Discuss.

    In words: Answer (its form). A form: Fill in. One of at most ``MAX_BUTTONS`` options: a button each (a click
    answers). One of more, or several: a select, and Send answer (what the select holds is sent). Options that let
    the person answer otherwise: Other… too (the words form).
    """
    approval_id = blocks.checked_approval_id(request.approval_id)
    value = button_value(approval_id, request.session_id)
    asked = request.question
    elements: list[dict[str, Any]]
    if asked is None or asked.kind == "text":
        elements = [blocks.button(ANSWER_ACTION, questions.ANSWER_LABEL, value, "primary")]
    elif asked.kind == "form":
        elements = [blocks.button(ANSWER_ACTION, questions.FORM_LABEL, value, "primary")]
    elif _as_buttons(asked):
        elements = [
            blocks.button(
                f"{CHOOSE_PREFIX}{index}",
                clip_plain(option.label, MAX_LABEL),
                choice_button_value(index, approval_id, request.session_id),
            )
            for index, option in enumerate(asked.options)
        ]
    else:
        elements = [_select(asked), blocks.button(SEND_CHOICE_ACTION, questions.SEND_CHOICE_LABEL, value, "primary")]
    if asked is not None and asked.kind == "choice" and asked.other:  # its form takes words, as Answer's does
        elements.append(blocks.button(ANSWER_OTHER_ACTION, questions.OTHER_LABEL, value))
    elements.append(blocks.button(DISCUSS_ACTION, approval_request.DISCUSS_LABEL, value))
    return {"type": "actions", "block_id": blocks.actions_block_id(approval_id), "elements": elements}


def _as_buttons(question: Question) -> bool:
    """Whether the question's options are buttons (one choice among a few) rather than a select."""
    return question.kind == "choice" and not question.multiple and len(question.options) <= MAX_BUTTONS


def _select(question: Question) -> dict[str, Any]:
    """The select of a question's options: one (``static_select``) or several (``multi_static_select``)."""
    options = []
    for index, option in enumerate(question.options[:MAX_OPTIONS]):
        shown: dict[str, Any] = {"text": blocks.plain_text(clip_plain(option.label, MAX_LABEL)), "value": str(index)}
        if option.description:
            shown["description"] = blocks.plain_text(clip_plain(option.description, MAX_DESCRIPTION))
        options.append(shown)
    placeholder = questions.CHOOSE_SEVERAL_PLACEHOLDER if question.multiple else questions.CHOOSE_ONE_PLACEHOLDER
    return {
        "type": "multi_static_select" if question.multiple else "static_select",
        "action_id": CHOICE_SELECT,
        "placeholder": blocks.plain_text(placeholder),
        "options": options,
    }


def answer_modal(request: ApprovalRequest, *, private_metadata: str, external_id: str = "") -> dict[str, Any]:
    """The answer form (views.open), bound to the question by its private metadata."""
    view: dict[str, Any] = {
        "type": "modal",
        "callback_id": ANSWER_MODAL_CALLBACK,
        "private_metadata": private_metadata,
        "title": blocks.plain_text(questions.ANSWER_MODAL_TITLE),
        "submit": blocks.plain_text(questions.ANSWER_MODAL_SUBMIT),
        "close": blocks.plain_text(questions.ANSWER_MODAL_CLOSE),
        "blocks": [
            blocks.section(questions.answer_modal_intro(request)),
            *(
                [blocks.context(approval_request.HIDDEN_CHARACTERS_WARNING)]
                if blocks.has_hidden_characters(request)
                else []
            ),
            {
                "type": "input",
                "block_id": ANSWER_BLOCK,
                "label": blocks.plain_text(questions.ANSWER_INPUT_LABEL),
                "element": {
                    "type": "plain_text_input",
                    "action_id": ANSWER_INPUT,
                    "multiline": True,
                    "max_length": questions.ANSWER_MAX,
                    "placeholder": blocks.plain_text(questions.ANSWER_PLACEHOLDER),
                },
            },
        ],
    }
    if external_id:
        view["external_id"] = external_id
    return view


def answer_form_modal(
    request: ApprovalRequest, form: EditForm, *, private_metadata: str, external_id: str = ""
) -> dict[str, Any]:
    """The form a ``form`` question is answered with (views.open): the edit form's fields, made from its schema."""
    view = answer_modal(request, private_metadata=private_metadata, external_id=external_id)
    view["blocks"] = [*view["blocks"][:-1], *edits.form_fields(form)]  # its fields, instead of the one text input
    return view


def answer_errors(problem: str) -> dict[str, Any]:
    """A view-submission answer showing ``problem`` under the answer input: ``ack(**answer_errors(...))``."""
    return {"response_action": "errors", "errors": {ANSWER_BLOCK: blocks.modal_error_text(problem)}}


def request_message(
    request: ApprovalRequest, *, decision: Decision | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """The message of any request: a question's, or an approval's (``blocks.approval_message``)."""
    if request.asks:
        return question_message(request, decision=decision, progress=progress)
    return blocks.approval_message(request, decision=decision, progress=progress)


def request_actions(request: ApprovalRequest) -> dict[str, Any]:
    """The live buttons of any request (App Home shows them under each entry)."""
    return question_actions(request) if request.asks else controls.approval_actions(request)
