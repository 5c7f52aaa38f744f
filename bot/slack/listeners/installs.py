"""OAuth mode: the app leaves a workspace or an org (``app_uninstalled``, or its bot token revoked: ``tokens_revoked``).

An org-wide (Enterprise Grid) install's envelope says so in ``authorizations[0].is_enterprise_install`` (Bolt reads
it into ``context.is_enterprise_install``), and may name one of the org's workspaces in ``team_id`` too.
"""

from typing import Any

from slack_bolt import App, BoltContext

from bot.flow.uninstalls import Uninstalls
from bot.services import Services
from bot.slack.payloads import EventCallback


def register(app: App, services: Services) -> None:
    """Add the uninstall listeners to ``app``."""
    uninstalls = Uninstalls(stores=services.stores, decisions=services.decisions, clients=services.clients)

    def uninstalled(body: EventCallback, context: BoltContext) -> None:
        team_id = str(body.get("team_id") or context.team_id or "")
        enterprise_id = body.get("enterprise_id") or context.enterprise_id
        if not services.stores.event_deliveries.first(
            str(body.get("event_id") or f"uninstalled:{team_id}:{enterprise_id}")
        ):
            return  # Slack redelivered it
        org_wide = bool(context.is_enterprise_install) or body.get("is_enterprise_install") is True
        uninstalls.uninstalled(team_id=team_id, enterprise_id=enterprise_id, org_wide=org_wide)

    def revoked(body: EventCallback, event: dict[str, Any], context: BoltContext) -> None:
        if not (event.get("tokens") or {}).get("bot"):
            return  # only user tokens, and the bot keeps none
        uninstalled(body, context)

    app.event("app_uninstalled")(uninstalled)
    app.event("tokens_revoked")(revoked)
