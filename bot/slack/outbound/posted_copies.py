"""Copies of a message an earlier delivery attempt may have posted, found by a marker.

Every message the outbox posts carries Slack message metadata naming its outbox entry (and,
for approval messages, the version of the approval it shows). When an attempt may have posted
before failing (its worker died, Redis or the network failed after Slack answered), the next
attempt reads the recent messages of the thread (or conversation) with their metadata and finds
those copies, so it can adopt one and delete the rest instead of posting again.
"""

from dataclasses import dataclass
from typing import Any, Final

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

EVENT_TYPE: Final = "signoff_outbox_entry"
_PAGE_SIZE: Final = 200
_MAX_PAGES: Final = 10


@dataclass(frozen=True)
class PostedCopy:
    """One message found with an entry's marker."""

    channel: str
    ts: str
    version: int


def marker(entry_id: str, *, version: int = 0) -> dict[str, Any]:
    """The ``metadata`` argument of a post (or update) made for outbox entry ``entry_id``."""
    return {"event_type": EVENT_TYPE, "event_payload": {"entry_id": entry_id, "version": version}}


def find_copies(client: WebClient, *, channel: str, thread_ts: str | None, entry_id: str) -> list[PostedCopy]:
    """The messages marked with ``entry_id`` in the thread (or, without one, the conversation), oldest first.

    ``channel`` may be a user id (a post to a person lands in the DM with them). Reads at most a
    few pages: a whole thread, or the latest messages of a conversation (history is newest first).
    """
    if channel[:1] in {"U", "W"}:
        channel = str(client.conversations_open(users=channel)["channel"]["id"])
    found: list[PostedCopy] = []
    cursor: str | None = None
    for _page in range(_MAX_PAGES):
        arguments: dict[str, Any] = {"channel": channel, "include_all_metadata": True, "limit": _PAGE_SIZE}
        if cursor:
            arguments["cursor"] = cursor
        if thread_ts:
            try:
                response = client.conversations_replies(ts=thread_ts, **arguments)
            except SlackApiError as error:
                if error.response.get("error") == "thread_not_found":
                    return []  # no message in the thread at all: nothing was posted there
                raise
        else:
            response = client.conversations_history(**arguments)
        for message in response.get("messages") or []:
            copy = _marked_copy(channel, message, entry_id)
            if copy is not None:
                found.append(copy)
        cursor = (response.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            break
    return sorted(found, key=lambda copy: _ts_key(copy.ts))


def _marked_copy(channel: str, message: dict[str, Any], entry_id: str) -> PostedCopy | None:
    metadata = message.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("event_type") != EVENT_TYPE:
        return None
    payload = metadata.get("event_payload")
    if not isinstance(payload, dict) or payload.get("entry_id") != entry_id:
        return None
    version = payload.get("version")
    return PostedCopy(channel, str(message["ts"]), version if isinstance(version, int) else 0)


def _ts_key(ts: str) -> tuple[int, int]:
    seconds, _, fraction = ts.partition(".")
    return int(seconds or 0), int(fraction.ljust(6, "0")[:6] or 0)
