"""The texts of an approver's edit: the "Edit the call" form, and what the editor is told."""

from typing import Final

from bot.domain.records import ApprovalRequest
from bot.render.safe_text import code_inline
from bot.render.texts.approval_request import asker

MODAL_TITLE: Final = "Edit the call"
SUBMIT_AND_APPROVE: Final = "Save and approve"
SUBMIT_ONLY: Final = "Save edit"
WHOLE_INPUT_LABEL: Final = "Input (JSON)"
CHECKBOX_YES: Final = "yes"
"""A checkbox field's one option, when the field has no name to show."""

CHANGED_TEXT: Final = (
    "This call was edited after you saw it. The approval message now shows the edited call: read it again, "
    "then approve it with the message's button."
)
EDITOR_APPROVAL_TEXT: Final = "You edited this call, and its rule wants someone else to approve the edited call."
FORBIDDEN_TEXT: Final = "This call cannot be edited here (its rule forbids edits, or its input does not fit a form)."
UNCHANGED_TEXT: Final = "Nothing was changed: edit a field, or close the form and approve the call as it is."
EDITED_TEXT: Final = "Saved. The edited call waits for someone else's approval."


def intro(request: ApprovalRequest) -> str:
    """What the form edits (mrkdwn)."""
    tool = code_inline(request.tool or request.interrupt_name)
    return f"Edit {asker(request)}'s call to {tool}. The agent runs exactly what you save."


def after_saving(*, approves: bool) -> str:
    """What saving does: approves, or asks someone else again (mrkdwn)."""
    if approves:
        return "Saving approves the edited call."
    return "Someone other than you must approve the edited call: saving asks them again."
