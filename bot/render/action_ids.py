"""Action ids, callback ids and block ids: named once, used everywhere (listeners, rendering, tests)."""

from typing import Final

from bot.domain.question_kinds import MAX_BUTTONS

APPROVE_ACTION: Final = "signoff_approve"
DENY_ACTION: Final = "signoff_deny"
DISCUSS_ACTION: Final = "signoff_discuss"
TAKE_ACTION: Final = "signoff_take"
APPROVE_AND_ALLOW_ACTION: Final = "signoff_approve_and_allow"
REVOKE_GRANT_ACTION: Final = "signoff_revoke_grant"
EDIT_ACTION: Final = "signoff_edit"
ALLOW_SIMILAR_ACTION: Final = "signoff_allow_similar"
ANSWER_ACTION: Final = "signoff_answer"
SEND_CHOICE_ACTION: Final = "signoff_send_choice"
"""Sends the options chosen in a question's select (the message's state says which)."""
CHOOSE_PREFIX: Final = "signoff_choose_"
"""A question's option buttons: this, then the option's index (ids of one block are distinct)."""
CHOOSE_BUTTONS: Final = frozenset(f"{CHOOSE_PREFIX}{index}" for index in range(MAX_BUTTONS))
CHOICE_SELECT: Final = "signoff_choice_select"
"""A question's select of options (one, or several); choosing only marks the choice: Send answer sends it."""
TRUST_ACTION: Final = "signoff_approve_trust"
ANSWER_INSTEAD_ACTION: Final = "signoff_answer_instead"
ANSWER_OTHER_ACTION: Final = "signoff_answer_other"
"""Other… beside a question's options (``other``): opens the words form, as Answer does."""
REVOKE_TRUST_ACTION: Final = "signoff_revoke_trust"
OTHER_BUTTONS: Final = frozenset(
    {REVOKE_GRANT_ACTION, ANSWER_ACTION, ANSWER_OTHER_ACTION, REVOKE_TRUST_ACTION, SEND_CHOICE_ACTION, *CHOOSE_BUTTONS}
)
"""The buttons of a question and of App Home; an approval message's: ``bot.render.controls.CONTROLS``."""

DENY_MODAL_CALLBACK: Final = "signoff_deny_modal"
DENY_REASON_BLOCK: Final = "signoff_deny_reason"
DENY_REASON_INPUT: Final = "signoff_deny_reason_input"
EDIT_MODAL_CALLBACK: Final = "signoff_edit_modal"
EDIT_FIELD_BLOCK_PREFIX: Final = "signoff_edit_field_"
EDIT_FIELD_INPUT: Final = "signoff_edit_value"
ANSWER_MODAL_CALLBACK: Final = "signoff_answer_modal"
ANSWER_BLOCK: Final = "signoff_answer"
ANSWER_INPUT: Final = "signoff_answer_input"
GRANT_MODAL_CALLBACK: Final = "signoff_grant_modal"
GRANT_FIELDS_BLOCK: Final = "signoff_grant_fields"
GRANT_DURATION_BLOCK: Final = "signoff_grant_duration"
GRANT_INPUT: Final = "signoff_grant_value"

_SESSION_MARK: Final = "/"
_DIGEST_MARK: Final = "@"  # never in an approval id (``<shard>-<hex>``)


def button_value(approval_id: str, session_id: str, digest: str | None = None) -> str:
    """What a button of an approval carries.

    The approval, the digest of the input it shows (when it names one: an Approve then approves exactly that) and its
    session (whose keys a click's script needs).
    """
    shown = f"{_DIGEST_MARK}{digest}" if digest else ""
    return f"{approval_id}{shown}{_SESSION_MARK}{session_id}"


def parse_button_value(value: str) -> tuple[str, str | None]:
    """The approval id and session id a button carries (``None``: a button of an older message, id only)."""
    approval_id, session_id, _digest = parse_button(value)
    return approval_id, session_id


def parse_button(value: str) -> tuple[str, str | None, str]:
    """The approval id, session id and shown input's digest a button carries (``""``: it names none)."""
    named, mark, session_id = value.partition(_SESSION_MARK)
    approval_id, _, digest = named.partition(_DIGEST_MARK)
    return approval_id, (session_id or None) if mark else None, digest


_DURATION_MARK: Final = "~"


def grant_button_value(seconds: int, approval_id: str, session_id: str, digest: str | None = None) -> str:
    """What an "Approve + allow" button carries: the duration offered, then what ``button_value`` says."""
    return f"{seconds}{_DURATION_MARK}{button_value(approval_id, session_id, digest)}"


def parse_grant_button_value(value: str) -> tuple[int, str, str | None, str] | None:
    """The duration, approval id, session id and shown digest of an "Approve + allow" button.

    ``None`` for a malformed one.
    """
    seconds, mark, rest = value.partition(_DURATION_MARK)
    if not mark or not seconds.isascii() or not seconds.isdigit() or len(seconds) > 7:
        return None
    return int(seconds), *parse_button(rest)


_CHOICE_MARK: Final = "~"


def choice_button_value(index: int, approval_id: str, session_id: str) -> str:
    """What an option's button carries: the option's index, then what ``button_value`` says."""
    return f"{index}{_CHOICE_MARK}{button_value(approval_id, session_id)}"


def parse_choice_button_value(value: str) -> tuple[int, str, str | None] | None:
    """The option's index, approval id and session id of an option's button (``None`` for a malformed one)."""
    index, mark, rest = value.partition(_CHOICE_MARK)
    if not mark or not _is_index(index):
        return None
    approval_id, session_id = parse_button_value(rest)
    return int(index), approval_id, session_id


def parse_choice_index(value: str) -> int | None:
    """The option index a select's option carries as its value (``None``: not one)."""
    return int(value) if _is_index(value) else None


def _is_index(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 3


_PLACE_MARK: Final = ":"


def revoke_button_value(team_id: str, channel_id: str, grant_id: str) -> str:
    """What a Revoke button (App Home) carries: the standing approval's workspace, channel and id."""
    return f"{team_id}{_PLACE_MARK}{channel_id}{_PLACE_MARK}{grant_id}"


def parse_revoke_button_value(value: str) -> tuple[str, str, str]:
    """The workspace, channel and grant id a Revoke button carries (``""`` for what a malformed one lacks)."""
    team_id, _, rest = value.partition(_PLACE_MARK)
    channel_id, _, grant_id = rest.partition(_PLACE_MARK)
    return team_id, channel_id, grant_id


_TOOL_MARK: Final = "/"  # never in a session id (``session_id_for``)


def revoke_trust_button_value(session_id: str, tool: str) -> str:
    """What a Revoke button of a trust (App Home) carries: the session and the tool trusted in it."""
    return f"{session_id}{_TOOL_MARK}{tool}"


def parse_revoke_trust_button_value(value: str) -> tuple[str, str]:
    """The session and tool a trust's Revoke button carries (``""`` for what a malformed one lacks)."""
    session_id, _, tool = value.partition(_TOOL_MARK)
    return session_id, tool


AGENT_COMMAND: Final = "/agent"
APPROVALS_COMMAND: Final = "/approvals"
