"""Requests to the agent: a mention, or ``/agent <request>``; each becomes a start job."""

import logging
import re
from contextlib import AbstractContextManager
from typing import Final

from opentelemetry.trace import Span, SpanKind
from slack_bolt import App, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.observe import tracing
from bot.render import action_ids as ids
from bot.render.texts import thread_posts
from bot.slack.edge.payloads import EventCallback, MentionEvent, SlashCommand
from bot.slack.listeners.lazy import lazily
from bot.store.event_deliveries import EventDeliveries
from bot.store.queues.jobs import JobQueue, StartJob
from bot.store.queues.outbox import Outbox

_MENTION: Final = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>")

logger = logging.getLogger(__name__)


def prompt_text(text: str) -> str:
    """The request without the bot's mention."""
    return _MENTION.sub("", text).strip()


def _request_span(name: str, job: StartJob) -> AbstractContextManager[Span]:
    """The span that opens a request's trace: the start job queued inside carries it to the worker."""
    attributes = {"signoff.session.id": job.session_id, "slack.team.id": job.team_id}
    return tracing.span(name, kind=SpanKind.SERVER, attributes=attributes)


def register(app: App, *, jobs: JobQueue, event_deliveries: EventDeliveries, outbox: Outbox) -> None:
    """Add the request listeners to ``app``."""

    def on_mention(body: EventCallback, event: MentionEvent) -> None:
        if not event_deliveries.first(body.get("event_id") or f"{event['channel']}:{event['ts']}"):
            return
        job = StartJob(
            team_id=body.get("team_id") or event.get("team", ""),
            channel_id=event["channel"],
            thread_ts=event.get("thread_ts") or event["ts"],
            user_id=event["user"],
            text=prompt_text(event.get("text", "")),
            prompt_id=body.get("event_id") or event["ts"],
        )
        with _request_span("slack app_mention", job):
            jobs.enqueue(job)

    def start_from_command(command: SlashCommand, client: WebClient, respond: Respond) -> None:
        request = command.get("text", "").strip()
        user = command["user_id"]
        try:
            anchor = client.chat_postMessage(
                channel=command["channel_id"], text=thread_posts.command_echo(user, request)
            )
        except SlackApiError as error:
            # Lazy: the command was acked already, so only its response_url can still tell the person.
            code = str(error.response.get("error") or "unknown error")
            logger.warning("channel=<%s> | /agent request not posted: %s", command["channel_id"], code)
            respond(text=thread_posts.command_not_started(code), response_type="ephemeral")
            return
        job = StartJob(
            team_id=command.get("team_id") or "",
            channel_id=command["channel_id"],
            thread_ts=str(anchor["ts"]),
            user_id=user,
            text=request,
            prompt_id=f"command:{command.get('trigger_id') or anchor['ts']}",
        )
        with _request_span(f"slack {ids.AGENT_COMMAND}", job):
            jobs.enqueue(job)

    app.event("app_mention")(on_mention)
    lazily(app.command(ids.AGENT_COMMAND), start_from_command, outbox=outbox)
