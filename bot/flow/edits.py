"""Editing a pending call before approving it: who may, the form, saving the edit, then the approval.

Whoever may approve a call may edit it (``DecisionService.find_checked``, as for an Approve), where its rule allows
edits (``bot.domain.edits.editable``). The form is made from the input waiting now (an earlier edit's, if any) and bound
to it: a form opened on an input edited since is refused (``changed``), checked again in the script that saves
(``bot.store.scripts.EDIT_CALL``), with the message update and the audit event. Saving drops the votes counted for
the other input. Then the editor's approval follows, through the decide script like any Approve and naming the
edited input's digest; unless the rule wants someone else to approve an edited call (``edits: other_approver``).
"""

from dataclasses import dataclass, field

from agent.approval import input_digest
from bot.domain.clock import epoch_ms
from bot.domain.edit_form import EditForm, edit_form, read_back
from bot.domain.edits import CallEdit, changes_json, editable, input_changes
from bot.domain.status import Status
from bot.flow.access import ModalBinding, Origin
from bot.flow.base import Flow
from bot.flow.outcomes import Outcome
from bot.store.approvals.approval_record import Approval
from bot.store.approvals.edits import EditStore
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, update_approval


@dataclass(frozen=True)
class EditOpening:
    """What an Edit click opens: the form for the approval, or why there is none (``refusal``).

    ``approves``: saving approves the edited call too (else the rule wants someone other than the editor).
    """

    approval: Approval | None = None
    form: EditForm | None = None
    refusal: Outcome | None = None
    approves: bool = True


@dataclass(frozen=True)
class EditSaved:
    """What a submitted form did.

    ``errors`` by field index (nothing saved), or the edit's status and the outcome of the approval that followed it, or
    of the check that refused the edit (``None``: neither).
    """

    status: Status
    errors: dict[int, str] = field(default_factory=dict)
    approval: Outcome | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EditFlow(Flow):
    """Opens edit forms and saves what they submit."""

    edits: EditStore
    audit: Audit

    def open(self, approval_id: str, *, user_id: str, origin: Origin, shown: str) -> EditOpening:
        """The form an Edit click on a button naming ``shown`` (the digest of the input it showed) opens."""
        approval, refusal = self._checked(approval_id, user_id=user_id, origin=origin, started_from=shown)
        if approval is None:
            return EditOpening(refusal=Outcome(Status.UNKNOWN))
        if refusal is not None:
            return EditOpening(approval, refusal=refusal)
        form = edit_form(approval.shown_input, approval.request.input_schema)
        if form is None:
            return EditOpening(approval, refusal=Outcome(Status.FORBIDDEN, approval=approval))
        return EditOpening(approval, form, approves=approval.request.policy.edits != "other_approver")

    def save(self, binding: ModalBinding, *, origin: Origin, values: dict[int, str | bool | None]) -> EditSaved:
        """Save what the form ``binding`` names was submitted with (``values`` by field index), then approve it."""
        user_id = binding.user_id
        approval, refusal = self._checked(
            binding.approval_id, user_id=user_id, origin=origin, started_from=binding.digest
        )
        if approval is None:
            return EditSaved(Status.UNKNOWN)
        if refusal is not None:
            return EditSaved(refusal.status, approval=refusal)
        request = approval.request
        form = edit_form(approval.shown_input, request.input_schema)  # the form that was opened: same input
        if form is None:
            return EditSaved(Status.FORBIDDEN)
        read = read_back(form, [values.get(index) for index in range(len(form.fields))])
        if read.input is None:
            return EditSaved(Status.INVALID, errors=read.errors)
        now = self.clock()
        edit = CallEdit(input=read.input, digest=input_digest(read.input), edited_by=user_id, edited_at=now)
        update = Outbox.script_entry(update_approval(request.session_id, request.approval_id), due_ms=epoch_ms(now))
        [event] = self.audit.script_events(
            ("edit",),
            session_id=request.session_id,
            actor=user_id,
            approval_id=request.approval_id,
            tool=request.tool,
            started_from=binding.digest,
            input_digest=edit.digest,
            original_digest=request.input_digest,
            changes=changes_json(input_changes(request.tool_input, read.input)),
            surface=origin.surface,
        )
        status, _now_digest = self.edits.edit(
            request.session_id, request.approval_id, edit=edit, started_from=binding.digest, update=update, audit=event
        )
        if status is not Status.EDITED or request.policy.edits == "other_approver":
            return EditSaved(status)
        outcome = self.decisions.decide(
            request.approval_id,
            session_id=request.session_id,
            user_id=user_id,
            kind="approve",
            reason=None,
            source="edit",
            origin=origin,
            shown=edit.digest,
        )
        return EditSaved(status, approval=outcome)

    def _checked(
        self, approval_id: str, *, user_id: str, origin: Origin, started_from: str
    ) -> tuple[Approval | None, Outcome | None]:
        """The approval (``None``: unknown), and why ``user_id`` may not edit it from ``origin`` from that input."""
        approval, refusal = self.decisions.find_checked(approval_id, user_id=user_id, action="approve", origin=origin)
        if approval is None or refusal is not None:
            return approval, refusal
        if not editable(approval.request):
            return approval, Outcome(Status.FORBIDDEN, approval=approval)
        if started_from != approval.shown_digest:
            return approval, Outcome(Status.CHANGED, approval=approval)
        return approval, None
