"""Edit on an approval message or the App Home: the form it opens, and that form's submission.

The form is bound, as the deny modal is (``bot.flow.access.ModalBinding``), to the approval, the person, where
they clicked, and the input it edits. What it saves and what follows: ``bot.flow.edits``.
"""

from collections.abc import Callable
from typing import Any, Final

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.domain.status import Status
from bot.flow.access import Modals
from bot.flow.decisions import DecisionService
from bot.flow.edits import EditFlow
from bot.flow.outcomes import Outcome
from bot.render import action_ids as ids
from bot.render import edits
from bot.render.texts import answers, editing
from bot.slack.edge.payloads import Action, BlockActions, SubmittedView, ViewSubmission
from bot.slack.listeners.bound_modals import ModalClick, modal_origin, submitted_binding
from bot.slack.listeners.feedback import outcome_text, team_of, tell
from bot.store.queues.outbox import Outbox

_MAX_FIELD_INDEX_DIGITS: Final = 3


def opening(*, flow: EditFlow, outbox: Outbox, modals: Modals) -> Callable[[BlockActions, Action, WebClient], None]:
    """What opens the edit form for an Edit click (``bot.slack.listeners.actions`` runs it lazily)."""

    def open_edit_modal(body: BlockActions, action: Action, client: WebClient) -> None:
        click = ModalClick.read(body, action)
        opening = flow.open(click.approval_id, user_id=click.who.user, origin=click.origin, shown=click.shown)
        if opening.approval is None or opening.form is None:
            click.refuse(outbox, opening.refusal, answers.unknown_approval())
            return
        request = opening.approval.request
        binding = click.bind(request.approval_id, purpose="edit")
        view = edits.edit_modal(
            request,
            opening.form,
            private_metadata=binding.metadata(),
            external_id=modals.remember(binding),
            approves=opening.approves,
        )
        client.views_open(trigger_id=body["trigger_id"], view=view)

    return open_edit_modal


def register(app: App, *, flow: EditFlow, decisions: DecisionService, modals: Modals, outbox: Outbox) -> None:
    """Add the edit form's submission listener to ``app``."""

    def submit_edit(ack: Ack, body: ViewSubmission, view: SubmittedView) -> None:
        binding = submitted_binding(modals, decisions, body, view, purpose="edit")
        if binding is None:
            ack(**edits.edit_refused(answers.wrong_place_refused()))
            return
        saved = flow.save(binding, origin=modal_origin(body, binding), values=submitted(view))
        if saved.errors:
            ack(**edits.edit_errors(saved.errors))
            return
        if saved.status is not Status.EDITED:  # nothing saved: the form stays open, saying why
            refusal = saved.approval or Outcome(saved.status)  # the refusal itself names who may decide
            ack(**edits.edit_refused(outcome_text(refusal) or answers.unknown_approval()))
            return
        ack()  # saved: what follows is told beside the message
        text = outcome_text(saved.approval) if saved.approval is not None else editing.EDITED_TEXT
        if text:
            tell(
                outbox,
                team_id=team_of(body),
                channel=binding.channel_id,
                user=binding.user_id,
                text=text,
            )

    app.view(ids.EDIT_MODAL_CALLBACK)(submit_edit)


def submitted(view: SubmittedView) -> dict[int, str | bool | None]:
    """The values of a submitted edit form by field index (a field Slack did not send is absent: empty)."""
    values: dict[int, str | bool | None] = {}
    state = (view.get("state") or {}).get("values") or {}
    for block_id, actions in state.items() if isinstance(state, dict) else ():
        index = str(block_id).removeprefix(ids.EDIT_FIELD_BLOCK_PREFIX)
        element = actions.get(ids.EDIT_FIELD_INPUT) if isinstance(actions, dict) else None
        if index == block_id or not index.isdigit() or len(index) > _MAX_FIELD_INDEX_DIGITS:
            continue
        if not isinstance(element, dict):
            continue
        value: Any
        if element.get("type") == "checkboxes":
            chosen = element.get("selected_options") or []
            value = any(isinstance(option, dict) and option.get("value") == edits.CHECKED for option in chosen)
        elif element.get("type") == "static_select":
            value = (element.get("selected_option") or {}).get("value")
        else:
            value = element.get("value")
        values[int(index)] = value if isinstance(value, str | bool) else None
    return values
