"""Action ids, callback ids and block ids: named once, used everywhere (listeners, rendering, tests)."""

from typing import Final

APPROVE_ACTION: Final = "signoff_approve"
DENY_ACTION: Final = "signoff_deny"
DISCUSS_ACTION: Final = "signoff_discuss"
CLAIM_ACTION: Final = "signoff_claim"
APPROVE_AND_ALLOW_ACTION: Final = "signoff_approve_and_allow"
REVOKE_GRANT_ACTION: Final = "signoff_revoke_grant"

DENY_MODAL_CALLBACK: Final = "signoff_deny_modal"
DENY_REASON_BLOCK: Final = "signoff_deny_reason"
DENY_REASON_INPUT: Final = "signoff_deny_reason_input"

_SESSION_MARK: Final = "/"


def button_value(approval_id: str, session_id: str) -> str:
    """What a button of an approval carries: the approval and its session (whose keys a click's script needs)."""
    return f"{approval_id}{_SESSION_MARK}{session_id}"


def parse_button_value(value: str) -> tuple[str, str | None]:
    """The approval id and session id a button carries (``None``: a button of an older message, id only)."""
    approval_id, mark, session_id = value.partition(_SESSION_MARK)
    return approval_id, (session_id or None) if mark else None


_DURATION_MARK: Final = "~"


def grant_button_value(seconds: int, approval_id: str, session_id: str) -> str:
    """What an "Approve + allow" button carries: the duration offered, then the approval and its session."""
    return f"{seconds}{_DURATION_MARK}{button_value(approval_id, session_id)}"


def parse_grant_button_value(value: str) -> tuple[int, str, str | None] | None:
    """The duration, approval id and session id of an "Approve + allow" button; ``None`` for a malformed one."""
    seconds, mark, rest = value.partition(_DURATION_MARK)
    if not mark or not seconds.isascii() or not seconds.isdigit() or len(seconds) > 7:
        return None
    approval_id, session_id = parse_button_value(rest)
    return int(seconds), approval_id, session_id


AGENT_COMMAND: Final = "/agent"
APPROVALS_COMMAND: Final = "/approvals"
