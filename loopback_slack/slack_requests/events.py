"""The Events API requests Slack sends an app.

``event_callback`` envelopes (``app_mention``, ``message``, ``app_home_opened``) and the ``url_verification``
handshake.
"""

import re
import time
from collections.abc import Mapping
from typing import Any

from loopback_slack.slack_requests.team import (
    APP_ID,
    BOT_ID,
    DEFAULT_TEAM,
    VERIFICATION_TOKEN,
    JsonDict,
    Team,
    new_ts,
    next_id,
)

_MENTION = re.compile(r"<@([UW][A-Z0-9]+)>")


def rich_text(text: str) -> list[JsonDict]:
    """The ``rich_text`` block Slack attaches to a person's message (``<@U…>`` mentions as user elements)."""
    elements: list[JsonDict] = []
    position = 0
    for match in _MENTION.finditer(text):
        if match.start() > position:
            elements.append({"type": "text", "text": text[position : match.start()]})
        elements.append({"type": "user", "user_id": match.group(1)})
        position = match.end()
    if position < len(text):
        elements.append({"type": "text", "text": text[position:]})
    section = {"type": "rich_text_section", "elements": elements}
    return [{"type": "rich_text", "block_id": f"rt{next_id():05d}", "elements": [section]}]


def event_callback(
    event: Mapping[str, Any], *, team: Team = DEFAULT_TEAM, event_id: str | None = None, event_time: int | None = None
) -> JsonDict:
    """Wrap ``event`` in the ``event_callback`` envelope Slack POSTs for the Events API, from ``team``."""
    envelope: JsonDict = {
        "token": VERIFICATION_TOKEN,
        "team_id": team.team_id,
        "context_team_id": team.team_id,
        "context_enterprise_id": team.enterprise_id,
        "api_app_id": team.app_id,
        "event": dict(event),
        "type": "event_callback",
        "event_id": event_id or f"Ev{next_id():09d}",
        "event_time": event_time if event_time is not None else int(time.time()),
        "authorizations": [
            {
                "enterprise_id": team.enterprise_id,
                "team_id": team.team_id,
                "user_id": team.bot_user_id,
                "is_bot": True,
                "is_enterprise_install": team.is_enterprise_install,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": f"4-{next_id():016x}",
    }
    if team.enterprise_id is not None:
        envelope["enterprise_id"] = team.enterprise_id
    return envelope


def app_mention(
    *,
    user: str,
    channel: str,
    text: str,
    ts: str | None = None,
    thread_ts: str | None = None,
    team: Team = DEFAULT_TEAM,
    event_id: str | None = None,
) -> JsonDict:
    """An ``app_mention`` event_callback from ``team`` (``text`` should contain ``<@U0BOT>``), in a thread if given."""
    ts = ts or new_ts()
    event: JsonDict = {
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "client_msg_id": f"{next_id():08x}-0000-4000-8000-000000000000",
        "team": team.team_id,
        "blocks": rich_text(text),
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event_callback(event, team=team, event_id=event_id)


def message_event(
    *,
    channel: str,
    text: str,
    user: str | None = None,
    ts: str | None = None,
    thread_ts: str | None = None,
    parent_user_id: str | None = None,
    bot_id: str | None = None,
    subtype: str | None = None,
    channel_type: str = "channel",
    team: Team = DEFAULT_TEAM,
    event_id: str | None = None,
    **extra: Any,
) -> JsonDict:
    """A ``message`` event_callback from ``team``.

    A human's thread reply: ``user``, ``thread_ts`` (and ``parent_user_id``). A bot's message: ``bot_id`` (with
    ``subtype="bot_message"`` for legacy bot posts). Other subtypes (``message_changed``, ``channel_join``...) via
    ``subtype`` and ``extra`` fields.
    """
    ts = ts or new_ts()
    event: JsonDict = {"type": "message", "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    if subtype is not None:
        event["subtype"] = subtype
    if user is not None:
        event["user"] = user
        event["team"] = team.team_id
    if bot_id is not None:
        event["bot_id"] = bot_id
        event["app_id"] = APP_ID if bot_id == BOT_ID else f"A{bot_id[1:]}"
    if user is not None and bot_id is None and subtype is None:
        event["client_msg_id"] = f"{next_id():08x}-0000-4000-8000-000000000000"
        event["blocks"] = rich_text(text)
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
        if parent_user_id is not None:
            event["parent_user_id"] = parent_user_id
    event["channel_type"] = channel_type
    event.update(extra)
    return event_callback(event, team=team, event_id=event_id)


def message_events(team: Team, *, user: str, channel: str, text: str, ts: str, thread_ts: str | None) -> list[JsonDict]:
    """What Slack sends for a person's message.

    A ``message`` event, plus an ``app_mention`` if it mentions the bot outside a DM.
    """
    direct = channel.startswith("D")
    sent = [
        message_event(
            channel=channel,
            text=text,
            user=user,
            ts=ts,
            thread_ts=thread_ts or None,
            parent_user_id=team.bot_user_id if thread_ts else None,
            channel_type="im" if direct else "channel",
            team=team,
        )
    ]
    if f"<@{team.bot_user_id}>" in text and not direct:
        sent.append(app_mention(user=user, channel=channel, text=text, ts=ts, thread_ts=thread_ts or None, team=team))
    return sent


def app_home_opened(team: Team, *, user: str, channel: str, view: Mapping[str, Any] | None) -> JsonDict:
    """What Slack sends when ``user`` opens the app's Home tab (``view``: the one published for them, if any)."""
    event: JsonDict = {"type": "app_home_opened", "user": user, "channel": channel, "tab": "home"}
    event["event_ts"] = new_ts()
    if view is not None:
        event["view"] = dict(view)
    return event_callback(event, team=team)


def url_verification(challenge: str | None = None) -> JsonDict:
    """The handshake Slack sends when the Request URL is configured; the app must echo ``challenge``."""
    return {
        "token": VERIFICATION_TOKEN,
        "challenge": challenge or f"challenge-{next_id():08d}",
        "type": "url_verification",
    }
