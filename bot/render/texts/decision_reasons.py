"""The reasons the bot writes on a decision nobody made by hand: shown on its message, received by the agent."""

from typing import Final

UNINSTALLED: Final = "uninstalled: the app was removed from this workspace"
"""Why a request expired when the app was uninstalled."""

APPROVED_ON_EXPIRY: Final = "approved automatically on expiry (low-risk)"
"""Why a low-risk request whose policy approves on expiry was approved."""


def withdrawn_through_api(client: str) -> str:
    """Why a request a client withdrew through the HTTP API without a reason of its own was withdrawn."""
    return f"withdrawn through the API by {client}"
