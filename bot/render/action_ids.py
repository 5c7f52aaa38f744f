"""Action ids, callback ids and block ids: named once, used everywhere (listeners, rendering, tests)."""

from typing import Final

APPROVE_ACTION: Final = "signoff_approve"
DENY_ACTION: Final = "signoff_deny"
DISCUSS_ACTION: Final = "signoff_discuss"
CLAIM_ACTION: Final = "signoff_claim"

DENY_MODAL_CALLBACK: Final = "signoff_deny_modal"
DENY_REASON_BLOCK: Final = "signoff_deny_reason"
DENY_REASON_INPUT: Final = "signoff_deny_reason_input"

AGENT_COMMAND: Final = "/agent"
APPROVALS_COMMAND: Final = "/approvals"
