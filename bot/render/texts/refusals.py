"""What an agent is told about a tool call Signoff did not allow.

These are the MCP permission tool's answers, which the Claude Agent SDK recipe gives too.
"""

from collections.abc import Mapping
from typing import Any, Final

OTHER_ARGUMENTS: Final = "The approval was given for other arguments. Do not retry."
"""An approval names an input other than the one that would run (by its digest): nothing runs."""


def not_approved(request: Mapping[str, Any]) -> str:
    """Why a decided request other than an approval does not run: denied, expired, withdrawn or never decided."""
    status = request["status"]
    decision = request.get("decision") or {}
    if status == "denied":
        who = decision.get("decided_by") or "an approver"
        why = decision.get("reason") or "no reason given"
        return f"Denied in Slack by {who}: {why}. Do not retry this call."
    if status == "expired":
        return "The sign-off request expired in Slack without a decision. Do not retry automatically."
    if status == "cancelled":
        return f"The sign-off request was withdrawn: {decision.get('reason') or 'no reason given'}."
    return "No decision arrived in time; the sign-off request was withdrawn."


def could_not_ask(error: object) -> str:
    """The API could not be reached, or refused the request: the call does not run (fail closed)."""
    return f"Signoff could not ask for a sign-off: {error}"


def request_refused(error: object) -> str:
    """The API refused the request (the error names the field) or cannot be reached: the tool call fails."""
    return f"Signoff refused the request: {error}"
