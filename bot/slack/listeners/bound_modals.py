"""The modals a click opens bound to it (``bot.flow.access.ModalBinding``): Deny, Edit, Answer and "allow similar".

Opening one reads the click, refuses it or binds the modal to it; a submission is read back against that binding.
"""

from dataclasses import dataclass

from bot.domain.status import Status
from bot.flow.access import ModalBinding, Modals, Origin, Purpose
from bot.flow.decisions import DecisionService
from bot.flow.outcomes import Kind, Outcome
from bot.render import action_ids as ids
from bot.render.texts import answers
from bot.slack.edge.payloads import Action, BlockActions, SubmittedView, ViewSubmission
from bot.slack.listeners.feedback import Clicker, click_origin, clicker, outcome_text, tell_clicker
from bot.store.approvals.approval_record import Approval
from bot.store.queues.outbox import Outbox


@dataclass(frozen=True)
class ModalClick:
    """A click on a button that opens a modal: who, where, the approval it names and the input it showed."""

    who: Clicker
    origin: Origin
    approval_id: str
    shown: str

    @classmethod
    def read(cls, body: BlockActions, action: Action) -> "ModalClick":
        """Read the click from a ``block_actions`` body and its action."""
        approval_id, _session_id, shown = ids.parse_button(str(action.get("value", "")))
        return cls(clicker(body), click_origin(body), approval_id, shown)

    def checked(self, decisions: DecisionService, outbox: Outbox, *, action: Kind) -> Approval | None:
        """The approval the click names, if the clicker may ``action`` it from there; else they are told why not."""
        approval, refusal = decisions.find_checked(
            self.approval_id, user_id=self.who.user, action=action, origin=self.origin
        )
        if approval is None or refusal is not None:
            self.refuse(outbox, refusal, answers.unknown_approval())
            return None
        return approval

    def refuse(self, outbox: Outbox, refusal: Outcome | None, fallback: str) -> None:
        """Tell the clicker why no modal opens (``fallback`` when the refusal has nothing to say)."""
        tell_clicker(outbox, self.who, outcome_text(refusal) or fallback)

    def bind(self, approval_id: str, *, purpose: Purpose, session_id: str = "") -> ModalBinding:
        """What the modal opened for this click is bound to (an Edit's or grant's input shown, an answer's session)."""
        digest = "" if purpose in ("deny", "answer") else self.shown
        origin = self.origin
        return ModalBinding(
            approval_id,
            self.who.user,
            origin.surface,
            origin.channel_id,
            origin.ts,
            purpose=purpose,
            digest=digest,
            session_id=session_id,
        )


def submitted_binding(
    modals: Modals, decisions: DecisionService, body: ViewSubmission, view: SubmittedView, *, purpose: Purpose
) -> ModalBinding | None:
    """What a submitted modal was opened for (``Modals.matches``), or ``None``: the refusal is audited."""
    user = body["user"]["id"]
    binding = modals.matches(
        str(view.get("external_id") or ""),
        metadata=str(view.get("private_metadata") or ""),
        user_id=user,
        purpose=purpose,
    )
    if binding is None:
        decisions.refuse(user_id=user, status=Status.WRONG_PLACE, surface=f"{purpose}_modal")
    return binding


def modal_origin(body: ViewSubmission, binding: ModalBinding) -> Origin:
    """Where a modal's button was clicked, with the workspaces of the submission."""
    team_id = str((body.get("team") or {}).get("id") or "")
    user_team_id = str((body.get("user") or {}).get("team_id") or "")
    return Origin(binding.surface, team_id, user_team_id, binding.channel_id, binding.ts)
