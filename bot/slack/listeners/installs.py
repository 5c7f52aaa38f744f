"""OAuth mode: the app leaves a workspace or an org (``app_uninstalled``, ``tokens_revoked``), or an org's workspaces.

An org admin takes workspaces from an org-wide install with ``team_access_revoked``.

An org-wide (Enterprise Grid) install's envelope says so in ``authorizations[0].is_enterprise_install`` (Bolt reads
it into ``context.is_enterprise_install``), and may name one of the org's workspaces in ``team_id`` too.
"""

from typing import Any

from slack_bolt import App, BoltContext

from bot.slack.edge.payloads import EventCallback, TeamAccessEvent
from bot.store.event_deliveries import EventDeliveries
from bot.store.queues.owed_uninstalls import OwedUninstall, OwedUninstalls


def register(app: App, *, owed: OwedUninstalls, event_deliveries: EventDeliveries) -> None:
    """Add the uninstall listeners to ``app``: each records what a worker owes, then acks (``bot.flow.uninstalls``)."""

    def uninstalled(body: EventCallback, context: BoltContext) -> None:
        team_id = str(body.get("team_id") or context.team_id or "")
        enterprise_id = body.get("enterprise_id") or context.enterprise_id
        delivery = str(body.get("event_id") or f"uninstalled:{team_id}:{enterprise_id}")
        if not event_deliveries.first(delivery):
            return  # Slack redelivered it
        org_wide = bool(context.is_enterprise_install) or body.get("is_enterprise_install") is True
        # Ending what waits there reads it all: a worker does it, Slack is answered now.
        owed.owe(delivery, OwedUninstall("uninstalled", team_id, enterprise_id, org_wide=org_wide))

    def revoked(body: EventCallback, event: dict[str, Any], context: BoltContext) -> None:
        if not (event.get("tokens") or {}).get("bot"):
            return  # only user tokens, and the bot keeps none
        uninstalled(body, context)

    def access_revoked(body: EventCallback, event: TeamAccessEvent, context: BoltContext) -> None:
        # Bolt does not authorize this event (no installation is read for it): the org comes from the envelope.
        enterprise_id = body.get("enterprise_id") or context.enterprise_id
        if not enterprise_id:
            return  # only an org's installation is ever taken from a workspace
        team_ids = event["team_ids"]
        delivery = body.get("event_id") or f"team_access_revoked:{enterprise_id}:{','.join(sorted(team_ids))}"
        if not event_deliveries.first(str(delivery)):
            return  # Slack redelivered it
        owed.owe(
            str(delivery), OwedUninstall("team_access_revoked", enterprise_id=enterprise_id, team_ids=tuple(team_ids))
        )

    app.event("app_uninstalled")(uninstalled)
    app.event("tokens_revoked")(revoked)
    app.event("team_access_revoked")(access_revoked)
