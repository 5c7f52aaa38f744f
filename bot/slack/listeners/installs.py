"""OAuth mode: the app leaves a workspace (``app_uninstalled``, or its bot token revoked: ``tokens_revoked``)."""

from typing import Any

from slack_bolt import App

from bot.flow.uninstalls import Uninstalls
from bot.services import Services
from bot.slack.payloads import EventCallback


def register(app: App, services: Services) -> None:
    """Add the uninstall listeners to ``app``."""
    uninstalls = Uninstalls(
        installations=services.installations,
        approvals=services.approvals,
        decisions=services.decisions,
        viewers=services.home_viewers,
        audit=services.audit,
    )

    def uninstalled(body: EventCallback) -> None:
        team_id = str(body.get("team_id") or "")
        if not services.event_deliveries.first(str(body.get("event_id") or f"uninstalled:{team_id}")):
            return  # Slack redelivered it
        uninstalls.uninstalled(team_id=team_id, enterprise_id=body.get("enterprise_id"))
        services.clients.forget(team_id)

    def revoked(body: EventCallback, event: dict[str, Any]) -> None:
        if not (event.get("tokens") or {}).get("bot"):
            return  # only user tokens, and the bot keeps none
        uninstalled(body)

    app.event("app_uninstalled")(uninstalled)
    app.event("tokens_revoked")(revoked)
