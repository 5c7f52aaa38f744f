"""Deny on an approval message or the App Home: the modal it opens, and that modal's submission.

The modal is bound to the approval and to where Deny was clicked (``bot.flow.access.ModalBinding``):
its ``private_metadata`` says so, and the bot remembered the same under the view's
``external_id`` before opening it. A submission that does not match is refused and audited.
"""

from collections.abc import Callable

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.flow.access import Modals
from bot.flow.decisions import DecisionService
from bot.render import action_ids as ids
from bot.render import blocks
from bot.render.texts import answers
from bot.slack.edge.payloads import Action, BlockActions, SubmittedView, ViewSubmission
from bot.slack.listeners.bound_modals import ModalClick, modal_origin, submitted_binding
from bot.slack.listeners.feedback import outcome_text
from bot.store.queues.outbox import Outbox


def opening(
    *, decisions: DecisionService, outbox: Outbox, modals: Modals
) -> Callable[[BlockActions, Action, WebClient], None]:
    """What opens the deny modal for a Deny click (``bot.slack.listeners.actions`` runs it lazily)."""

    def open_deny_modal(body: BlockActions, action: Action, client: WebClient) -> None:
        click = ModalClick.read(body, action)
        approval = click.checked(decisions, outbox, action="deny")
        if approval is None:
            return
        request = approval.request
        binding = click.bind(request.approval_id, purpose="deny")
        view = blocks.deny_modal(
            request,
            reason_required=request.policy.reason_required_on_deny,
            private_metadata=binding.metadata(),
            external_id=modals.remember(binding),
        )
        client.views_open(trigger_id=body["trigger_id"], view=view)

    return open_deny_modal


def register(app: App, *, decisions: DecisionService, modals: Modals) -> None:
    """Add the deny modal's submission listener to ``app``."""

    def submit_deny(ack: Ack, body: ViewSubmission, view: SubmittedView) -> None:
        user = body["user"]["id"]
        values = view.get("state", {}).get("values", {})
        reason = (values.get(ids.DENY_REASON_BLOCK, {}).get(ids.DENY_REASON_INPUT) or {}).get("value")
        binding = submitted_binding(modals, decisions, body, view, purpose="deny")
        if binding is None:
            ack(**blocks.modal_errors(answers.wrong_place_refused()))
            return
        origin = modal_origin(body, binding)
        outcome = decisions.decide(
            binding.approval_id, user_id=user, kind="deny", reason=reason, source="modal", origin=origin
        )
        text = outcome_text(outcome)
        if text:
            ack(**blocks.modal_errors(text))
        else:
            ack()

    app.view(ids.DENY_MODAL_CALLBACK)(submit_deny)
