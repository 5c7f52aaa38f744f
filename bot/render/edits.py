"""The "Edit the call" modal: its fields, made from ``bot.domain.edit_form``, and its errors (pure functions).

Each field is one input block, ``EDIT_FIELD_BLOCK_PREFIX`` and its index, so an error Slack shows under a field
names the field the person typed in. The Edit button: ``bot.render.controls``; the edited call in the message:
``bot.render.blocks``; the texts: ``bot.render.texts.editing``.
"""

from typing import Any, Final

from bot.domain.edit_form import MAX_OPTION_CHARS, WHOLE_INPUT, EditForm, FormField
from bot.domain.records import ApprovalRequest
from bot.render import blocks, safe_text
from bot.render.action_ids import (
    EDIT_FIELD_BLOCK_PREFIX,
    EDIT_FIELD_INPUT,
    EDIT_MODAL_CALLBACK,
)
from bot.render.texts import approval_request, editing

CHECKED: Final = "true"
"""The value of a checkbox field's one option."""
_LABEL_MAX: Final = 2000  # Slack's input label and hint


def field_block_id(index: int) -> str:
    """The block id of the form's ``index``-th field."""
    return f"{EDIT_FIELD_BLOCK_PREFIX}{index}"


def edit_modal(
    request: ApprovalRequest, form: EditForm, *, private_metadata: str, external_id: str, approves: bool
) -> dict[str, Any]:
    """The edit form (views.open). ``approves``: saving also approves (else someone else must approve it)."""
    view: dict[str, Any] = {
        "type": "modal",
        "callback_id": EDIT_MODAL_CALLBACK,
        "private_metadata": private_metadata,
        "external_id": external_id,
        "title": blocks.plain_text(editing.MODAL_TITLE),
        "submit": blocks.plain_text(editing.SUBMIT_AND_APPROVE if approves else editing.SUBMIT_ONLY),
        "close": blocks.plain_text(approval_request.CANCEL_LABEL),
        "blocks": [
            blocks.section(editing.intro(request)),
            blocks.context(editing.after_saving(approves=approves), *_warnings(request)),
            *form_fields(form),
        ],
    }
    return view


def _warnings(request: ApprovalRequest) -> list[str]:
    return [approval_request.HIDDEN_CHARACTERS_WARNING] if blocks.has_hidden_characters(request) else []


def form_fields(form: EditForm) -> list[dict[str, Any]]:
    """The form's fields as input blocks (the edit form's, and a question's form: ``bot.render.questions``)."""
    return [_input_block(index, each) for index, each in enumerate(form.fields)]


def _input_block(index: int, each: FormField) -> dict[str, Any]:
    label = editing.WHOLE_INPUT_LABEL if each.name == WHOLE_INPUT else each.name
    block: dict[str, Any] = {
        "type": "input",
        "block_id": field_block_id(index),
        "label": blocks.plain_text(safe_text.clip_plain(label, _LABEL_MAX)),
        "optional": not each.required or each.kind == "checkbox",
        "element": _element(each),
    }
    if each.description:
        block["hint"] = blocks.plain_text(safe_text.clip_plain(each.description, _LABEL_MAX))
    return block


def _element(each: FormField) -> dict[str, Any]:
    element: dict[str, Any]
    if each.kind == "checkbox":
        option = {"text": blocks.plain_text(_option_text(each.name) or editing.CHECKBOX_YES), "value": CHECKED}
        element = {"type": "checkboxes", "options": [option]}
        if each.initial is True:
            element["initial_options"] = [option]
    elif each.kind == "select":
        options = [{"text": blocks.plain_text(_option_text(value)), "value": value} for value in each.options]
        element = {"type": "static_select", "options": options}
        chosen = [option for option in options if option["value"] == each.initial]
        if chosen:
            element["initial_option"] = chosen[0]
    elif each.kind in ("number", "integer"):
        element = {"type": "number_input", "is_decimal_allowed": each.kind == "number"}
        for key, bound in (("min_value", each.minimum), ("max_value", each.maximum)):
            if bound is not None:
                element[key] = _number_text(bound, whole=each.kind == "integer")
    else:
        element = {"type": "plain_text_input", "multiline": each.multiline or each.kind == "json"}
        element["max_length"] = each.max_length
    if isinstance(each.initial, str) and each.initial != "" and each.kind != "select":
        element["initial_value"] = each.initial
    element["action_id"] = EDIT_FIELD_INPUT
    return element


def _option_text(text: str) -> str:
    """A choice's text as shown: its hidden characters spelled out, so two that look alike are told apart."""
    return safe_text.clip_plain(text, MAX_OPTION_CHARS)


def _number_text(bound: float, *, whole: bool) -> str:
    return str(int(bound)) if whole or float(bound).is_integer() else repr(float(bound))


def edit_errors(errors: dict[int, str]) -> dict[str, Any]:
    """A view-submission answer showing each error under its field: ``ack(**edit_errors(...))``."""
    shown = {
        field_block_id(index): safe_text.clip_plain(problem, blocks.MODAL_ERROR_MAX)
        for index, problem in errors.items()
    }
    return {"response_action": "errors", "errors": shown}


def edit_refused(text: str) -> dict[str, Any]:
    """A view-submission answer showing why nothing was saved, under the first field (every form has one)."""
    return edit_errors({0: text})
