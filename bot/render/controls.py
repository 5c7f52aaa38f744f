"""The buttons of an approval message, one spec each (``Control``): its action id, label, style and when it shows.

``approval_actions`` renders them in the order of ``CONTROLS``; ``bot.slack.listeners.actions`` answers each one's
clicks (who may, its flow call, what the clicker is told). A new button is a ``Control`` here (its id spelled in it;
the older buttons name theirs in ``bot.render.action_ids``, where the tests find them) and an entry there.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bot.domain.edits import editable
from bot.domain.grants import offers_similar
from bot.domain.records import ApprovalRequest
from bot.render import action_ids as ids
from bot.render.block_kit import button, plain_text
from bot.render.texts import approval_request, standing_approvals

MAX_APPROVAL_ID: Final = 200  # fits the block id (255) and the button value (2000)
ACTIONS_BLOCK_PREFIX: Final = "signoff_actions:"


def _always(_request: ApprovalRequest) -> bool:
    return True


@dataclass(frozen=True, kw_only=True)
class Control:
    """One button of an approval message.

    Attributes:
        action_id: What its clicks carry (``bot.render.action_ids``).
        label: Its text (plain), or what makes it from the request.
        shown: Whether the request shows it.
        style: ``primary``, ``danger`` or none.
        aliases: Ids it had before (a rename): buttons of messages posted then keep working.
        render: Its buttons, when one request shows several or a confirm (else one button named by ``label``).
    """

    action_id: str
    label: str | Callable[[ApprovalRequest], str]
    shown: Callable[[ApprovalRequest], bool] = _always
    style: str | None = None
    aliases: tuple[str, ...] = ()
    render: Callable[[ApprovalRequest], Sequence[dict[str, Any]]] | None = None

    @property
    def action_ids(self) -> tuple[str, ...]:
        """Every id a click on this button may carry: its own, then its older ones."""
        return (self.action_id, *self.aliases)

    def buttons(self, request: ApprovalRequest) -> list[dict[str, Any]]:
        """This control's buttons on ``request``'s message (none when it is not shown there)."""
        if not self.shown(request):
            return []
        if self.render is not None:
            return list(self.render(request))
        label = self.label(request) if callable(self.label) else self.label
        return [button(self.action_id, label, _value(request), self.style)]


def _value(request: ApprovalRequest) -> str:
    return ids.button_value(request.approval_id, request.session_id, request.input_digest)


def _grant_buttons(request: ApprovalRequest) -> list[dict[str, Any]]:
    return [_grant_button(request, seconds) for seconds in request.policy.grant_durations]


def _grant_button(request: ApprovalRequest, seconds: int) -> dict[str, Any]:
    value = ids.grant_button_value(seconds, request.approval_id, request.session_id, request.input_digest)
    label = standing_approvals.approve_and_allow_label(seconds)
    allow = button(ids.APPROVE_AND_ALLOW_ACTION, label, value)
    # Slack shows what is granted before it is: the person confirms the scope (the arguments are above).
    allow["confirm"] = {
        "title": plain_text(label),
        "text": {"type": "mrkdwn", "text": standing_approvals.approve_and_allow_confirm(request, seconds)},
        "confirm": plain_text(approval_request.APPROVE_LABEL),
        "deny": plain_text(approval_request.CANCEL_LABEL),
    }
    return allow


def _grantable(request: ApprovalRequest) -> bool:
    return request.call_digest is not None  # a standing approval covers one exact call: never a batch


APPROVE: Final = Control(action_id=ids.APPROVE_ACTION, label=approval_request.APPROVE_LABEL, style="primary")
DENY: Final = Control(action_id=ids.DENY_ACTION, label=approval_request.DENY_LABEL, style="danger")
TRUST: Final = Control(
    action_id=ids.TRUST_ACTION,
    label=lambda request: approval_request.trust_label(request.tool),
    shown=lambda request: request.trust_offered,
)
EDIT: Final = Control(action_id=ids.EDIT_ACTION, label=approval_request.EDIT_LABEL, shown=editable)
"""Its value names the input it edits: a form opened on an input edited since is refused."""
ANSWER_INSTEAD: Final = Control(
    action_id=ids.ANSWER_INSTEAD_ACTION,
    label=approval_request.ANSWER_INSTEAD_LABEL,
    shown=lambda request: request.answer_offered,
)
"""Opens a one-field form: the person's words end the request instead of a decision (``answer_offered``)."""
DISCUSS: Final = Control(action_id=ids.DISCUSS_ACTION, label=approval_request.DISCUSS_LABEL)
TAKE: Final = Control(
    action_id=ids.TAKE_ACTION,
    label=approval_request.TAKE_LABEL,
    shown=lambda request: bool(request.policy.claim_pause_s),
    aliases=("signoff_claim",),  # its id until Claim became Take: messages posted before still carry it
)
""""I'm on it": pauses the escalation ladder for the policy's pause and shows who took the request."""
APPROVE_AND_ALLOW: Final = Control(
    action_id=ids.APPROVE_AND_ALLOW_ACTION,
    label=standing_approvals.APPROVE_AND_ALLOW_LABEL,
    shown=_grantable,
    render=_grant_buttons,
)
"""One button per duration the policy offers, each confirming what it grants."""
ALLOW_SIMILAR: Final = Control(
    action_id=ids.ALLOW_SIMILAR_ACTION,
    label=standing_approvals.ALLOW_SIMILAR_LABEL,
    shown=lambda request: _grantable(request) and offers_similar(request),
)

CONTROLS: Final = (APPROVE, DENY, TRUST, EDIT, ANSWER_INSTEAD, DISCUSS, TAKE, APPROVE_AND_ALLOW, ALLOW_SIMILAR)
"""Every button of an approval message, in the order it shows them."""
ACTION_IDS: Final = frozenset(action_id for control in CONTROLS for action_id in control.action_ids)
"""Every id an approval message's click may carry, older ones too."""
BUTTONS: Final = ACTION_IDS | ids.OTHER_BUTTONS
"""Every button the bot renders. Each carries what it acts on as its value (an approval, a standing approval): a
click on one without it is refused before any listener runs (``bot.slack.edge.payload_shape``)."""


def checked_approval_id(approval_id: str) -> str:
    """``approval_id``, if it fits the block ids and button values that carry it (else ``ValueError``)."""
    if not approval_id or len(approval_id) > MAX_APPROVAL_ID:
        raise ValueError(f"approval id must be 1..{MAX_APPROVAL_ID} characters, got {len(approval_id)}")
    return approval_id


def actions_block_id(approval_id: str) -> str:
    """Block id of the approval message's buttons: the prefix and the approval id."""
    return ACTIONS_BLOCK_PREFIX + checked_approval_id(approval_id)


def approval_actions(request: ApprovalRequest) -> dict[str, Any]:
    """The buttons of an undecided request: every control it shows, in ``CONTROLS``' order."""
    block_id = actions_block_id(request.approval_id)
    return {
        "type": "actions",
        "block_id": block_id,
        "elements": [each for control in CONTROLS for each in control.buttons(request)],
    }
