"""Answer on a question's message or the App Home, or an approval's "Answer instead": the form, and its submission.

The form is bound to the question and to where Answer was clicked, as the deny form is
(``bot.slack.listeners.bound_modals``). The answer is recorded by the decide script like any decision:
the first answer wins, a second person is told who answered.
"""

from collections.abc import Callable

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.domain.edit_form import EditForm, read_back
from bot.domain.question_kinds import answer_form
from bot.domain.status import Status
from bot.flow.access import Modals
from bot.flow.decisions import DecisionService
from bot.render import action_ids as ids
from bot.render import edits, questions
from bot.render.texts import answers
from bot.render.texts import questions as question_texts
from bot.slack.edge.after_answer import after_answer
from bot.slack.edge.payloads import Action, BlockActions, SubmittedView, ViewSubmission
from bot.slack.listeners.bound_modals import ModalClick, modal_origin, submitted_binding
from bot.slack.listeners.edits import submitted
from bot.slack.listeners.feedback import Clicker, outcome_text, team_of, tell_clicker
from bot.slack.listeners.lazy import lazily
from bot.store.approvals.approval_record import Approval
from bot.store.queues.outbox import Outbox


def opening(
    *, decisions: DecisionService, modals: Modals, outbox: Outbox
) -> Callable[[BlockActions, Action, WebClient], None]:
    """What opens the answer form for an Answer click, or an approval's "Answer instead" (run lazily)."""

    def open_answer_modal(body: BlockActions, action: Action, client: WebClient) -> None:
        click = ModalClick.read(body, action)
        approval = click.checked(decisions, outbox, action="answer")
        if approval is None:
            return
        request = approval.request
        asked = request.question
        if asked is not None and asked.kind == "choice" and not asked.other:  # with its options only, never in words
            click.refuse(outbox, None, question_texts.wrong_action())
            return
        binding = click.bind(request.approval_id, purpose="answer", session_id=request.session_id)
        metadata, external_id = binding.metadata(), modals.remember(binding)
        if asked is not None and asked.kind == "form":
            form = answer_form(asked)
            view = questions.answer_form_modal(request, form, private_metadata=metadata, external_id=external_id)
        else:
            view = questions.answer_modal(request, private_metadata=metadata, external_id=external_id)
        client.views_open(trigger_id=body["trigger_id"], view=view)

    return open_answer_modal


def register(app: App, *, decisions: DecisionService, modals: Modals, outbox: Outbox) -> None:
    """Add the Answer listeners to ``app``."""

    def submit_answer(ack: Ack, body: ViewSubmission, view: SubmittedView) -> None:
        user = body["user"]["id"]
        values = view.get("state", {}).get("values", {})
        answer = (values.get(ids.ANSWER_BLOCK, {}).get(ids.ANSWER_INPUT) or {}).get("value")
        binding = submitted_binding(modals, decisions, body, view, purpose="answer")
        if binding is None:
            ack(**questions.answer_errors(answers.wrong_place_refused()))
            return
        # A form's answer is read back field by field (an error shows under its field), then sent as one object.
        form = _form_of(approval := decisions.find(binding.approval_id, session_id=binding.session_id or None))
        filled_in = None
        if form is not None:
            fields = submitted(view)
            read = read_back(form, [fields.get(index) for index in range(len(form.fields))])
            if read.input is None:
                ack(**edits.edit_errors(read.errors))
                return
            filled_in = read.input
        outcome = decisions.decide(
            binding.approval_id,
            session_id=approval.request.session_id if approval is not None else None,  # found already: not again
            user_id=user,
            kind="answer",
            reason=answer,
            source="modal",
            origin=modal_origin(body, binding),
            filled_in=filled_in,
            with_request=True,  # the confirmation names the question
        )
        request = outcome.request
        if outcome.status is Status.DECIDED and request is not None:
            ack()
            # Where Answer was clicked: the question's thread, or a direct message for a click on App Home.
            channel = binding.channel_id or None
            who = Clicker(user, channel, request.thread_ts if channel else None, team_of(body))
            sent = question_texts.answer_sent(request)
            after_answer(lambda: tell_clicker(outbox, who, sent))  # the form closes at once
            return
        text = outcome_text(outcome)
        if not text:
            ack()
        elif form is not None:
            ack(**edits.edit_refused(text))  # a form has no answer input: said under its first field
        else:
            ack(**questions.answer_errors(text))

    open_answer = opening(decisions=decisions, modals=modals, outbox=outbox)
    lazily(app.action(ids.ANSWER_ACTION), open_answer, outbox=outbox)
    lazily(app.action(ids.ANSWER_OTHER_ACTION), open_answer, outbox=outbox)
    app.view(ids.ANSWER_MODAL_CALLBACK)(submit_answer)


def _form_of(approval: Approval | None) -> EditForm | None:
    """The form a question is answered with, when it is a ``form`` question."""
    asked = approval.request.question if approval is not None else None
    return answer_form(asked) if asked is not None and asked.kind == "form" else None
