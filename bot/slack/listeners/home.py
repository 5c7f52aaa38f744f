"""The App Home tab and ``/approvals``: what waits, for whom, and where."""

import logging

from slack_bolt import App, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.domain.clock import Clock
from bot.flow.home_queue import HomeQueue
from bot.render import action_ids as ids
from bot.render.texts import app_home
from bot.slack.edge.payloads import EventCallback, HomeOpenedEvent, SlashCommand
from bot.slack.listeners.lazy import lazily
from bot.store.queues.outbox import Outbox, home_refresh
from bot.store.workspaces.home_viewers import HomeViewers

logger = logging.getLogger(__name__)


def register(app: App, *, home_viewers: HomeViewers, outbox: Outbox, home_queue: HomeQueue, clock: Clock) -> None:
    """Add the App Home and ``/approvals`` listeners to ``app``."""

    def home_opened(body: EventCallback, event: HomeOpenedEvent) -> None:
        if event.get("tab", "home") != "home":
            return
        user, team_id = event["user"], str(body.get("team_id") or "")
        # Remember the viewer: their tab is refreshed when a request they can see changes.
        # Building the tab reads many approvals: the outbox does it, not the 3-second event.
        home_viewers.add(team_id, user)
        outbox.want_home(home_refresh(user, team_id=team_id))

    def list_pending(command: SlashCommand, client: WebClient, respond: Respond) -> None:
        channel = command["channel_id"]
        lines = []
        requests, waiting = home_queue.pending_in(str(command.get("team_id") or ""), channel)
        for request in requests:
            link = _permalink(client, channel=channel, ts=request.message_ts) if request.message_ts else None
            lines.append(app_home.pending_line(request, now=clock(), link=link))
        respond(text=app_home.pending_list(lines, waiting=waiting), response_type="ephemeral")

    app.event("app_home_opened")(home_opened)
    lazily(app.command(ids.APPROVALS_COMMAND), list_pending, outbox=outbox)


def _permalink(client: WebClient, *, channel: str, ts: str) -> str | None:
    """The message's link, or ``None`` when Slack gives none (the message was deleted): listed without it."""
    try:
        return str(client.chat_getPermalink(channel=channel, message_ts=ts)["permalink"])
    except (SlackApiError, OSError) as error:
        logger.warning("channel=<%s>, ts=<%s> | no permalink, listed without: %s", channel, ts, error)
        return None
