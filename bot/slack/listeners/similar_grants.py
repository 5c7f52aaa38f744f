"""'Approve + allow similar…': the modal where the approver ticks the fields a standing approval pins.

And its submission, which approves the call, then grants (``bot.flow.grants``).

The modal is bound, as the deny and edit forms are (``bot.flow.access.ModalBinding``), to the approval, the person,
where they clicked and the input it showed.
"""

from collections.abc import Callable

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.flow.access import Modals
from bot.flow.decisions import DecisionService
from bot.flow.grants import GrantFlow
from bot.render import action_ids as ids
from bot.render import grant_form
from bot.render.texts import answers, standing_approvals
from bot.slack.edge.payloads import Action, BlockActions, SubmittedView, ViewSubmission
from bot.slack.listeners.bound_modals import ModalClick, modal_origin, submitted_binding
from bot.slack.listeners.feedback import team_of, tell
from bot.slack.listeners.grants import granted_text
from bot.store.queues.outbox import Outbox


def opening(*, flow: GrantFlow, outbox: Outbox, modals: Modals) -> Callable[[BlockActions, Action, WebClient], None]:
    """What opens the "allow similar" modal for its click (``bot.slack.listeners.actions`` runs it lazily)."""

    def open_similar(body: BlockActions, action: Action, client: WebClient) -> None:
        click = ModalClick.read(body, action)
        opening = flow.open_similar(click.approval_id, user_id=click.who.user, origin=click.origin, shown=click.shown)
        request = opening.request
        if request is None:
            fallback = (
                standing_approvals.grant_not_for_edited() if opening.edited else standing_approvals.grant_not_offered()
            )
            click.refuse(outbox, opening.refusal, fallback)
            return
        binding = click.bind(request.approval_id, purpose="grant")
        view = grant_form.grant_modal(
            request, private_metadata=binding.metadata(), external_id=modals.remember(binding)
        )
        client.views_open(trigger_id=body["trigger_id"], view=view)

    return open_similar


def register(app: App, *, flow: GrantFlow, decisions: DecisionService, modals: Modals, outbox: Outbox) -> None:
    """Add the "allow similar" modal's submission listener to ``app``."""

    def submit_similar(ack: Ack, body: ViewSubmission, view: SubmittedView) -> None:
        binding = submitted_binding(modals, decisions, body, view, purpose="grant")
        if binding is None:
            ack(**grant_form.grant_errors({ids.GRANT_FIELDS_BLOCK: answers.wrong_place_refused()}))
            return
        fields, seconds = _picked(view)
        if not fields:
            ack(**grant_form.grant_errors({ids.GRANT_FIELDS_BLOCK: standing_approvals.NO_FIELD}))
            return
        if seconds is None:
            ack(**grant_form.grant_errors({ids.GRANT_DURATION_BLOCK: standing_approvals.NO_DURATION}))
            return
        granted = flow.approve_and_allow(
            binding.approval_id,
            session_id=None,
            user_id=binding.user_id,
            seconds=seconds,
            origin=modal_origin(body, binding),
            shown=binding.digest,
            fields=fields,
        )
        ack()
        tell(
            outbox,
            team_id=team_of(body),
            channel=binding.channel_id,
            user=binding.user_id,
            text=granted_text(granted),
        )

    app.view(ids.GRANT_MODAL_CALLBACK)(submit_similar)


def _picked(view: SubmittedView) -> tuple[tuple[str, ...], int | None]:
    """The fields ticked and the duration chosen in a submitted "allow similar" modal (``None``: none chosen)."""
    state = (view.get("state") or {}).get("values") or {}
    ticked = ((state.get(ids.GRANT_FIELDS_BLOCK) or {}).get(ids.GRANT_INPUT) or {}).get("selected_options") or []
    fields = tuple(str(option.get("value")) for option in ticked if isinstance(option, dict))
    chosen = ((state.get(ids.GRANT_DURATION_BLOCK) or {}).get(ids.GRANT_INPUT) or {}).get("selected_option") or {}
    value = str(chosen.get("value", "")) if isinstance(chosen, dict) else ""
    return fields, int(value) if value.isascii() and value.isdigit() and len(value) <= 7 else None
