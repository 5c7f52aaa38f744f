"""What an agent is told while its request waits in Slack: the MCP server's progress notifications."""

from collections.abc import Mapping
from typing import Any


def progress_note(request: Mapping[str, Any]) -> str:
    """A pending request (as the HTTP API shows it): the policy it waits under and, with a quorum, the votes so far.

    A question waits for an answer, not a decision.
    """
    if request.get("kind") == "question":
        return f"waiting for an answer in Slack (policy {request.get('policy') or 'pending'})"
    votes = len(request.get("votes") or [])
    quorum = request.get("quorum") or 1
    tally = f", {votes} of {quorum} approvals" if quorum > 1 else ""
    return f"waiting for a decision in Slack (policy {request.get('policy') or 'pending'}{tally})"
