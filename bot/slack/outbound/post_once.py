"""A post made once, whatever attempt makes it (``post_once``).

An attempt that may follow one which posted looks for its copies first, keeps one and deletes the others, and
records the copy kept in the step that completes the entry (``Outbox.complete_post``). Each post carries a marker
naming its entry (``bot.slack.outbound.posted_copies``), which is how its copies are found.
"""

import logging
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.outbound.posted_copies import PostedCopy, find_copies, marker
from bot.store.approvals.copy_listing import CopyListing
from bot.store.queues.outbox import Outbox, OutboxEntry

logger = logging.getLogger(__name__)


def post_once(
    outbox: Outbox,
    entry: OutboxEntry,
    *,
    slack: WebClient,
    channel: str,
    thread_ts: str | None,
    message: dict[str, Any],
    version: int,
    known: PostedCopy | None,
    identify: Callable[[PostedCopy], str],
    record: Callable[[PostedCopy], tuple[str, list[tuple[str, str]]]] | None = None,
    post: bool = True,
    listing: CopyListing | None = None,
) -> PostedCopy | None:
    """Post ``message`` for ``entry`` unless an earlier attempt did; complete the entry with the copy kept.

    Args:
        outbox: Where the entry is completed with the copy kept.
        entry: The entry to deliver.
        slack: The client of the workspace it is posted in.
        channel: Where to post (a user id: the DM with them).
        thread_ts: The thread to post in, if any.
        message: ``text`` / ``blocks`` of the post.
        version: The approval version ``message`` shows (0 for other messages).
        known: The copy already recorded, if any.
        identify: What identifies a copy in the records (``complete_post``'s ``copy``).
        record: The caller's record of a copy, for ``complete_post`` (its first field is the check).
        post: Whether to post when no copy exists (else only find and keep one).
        listing: Where the record lists the copy for its person (``complete_post``'s).

    Returns:
        The copy kept if this call posted or adopted it, else ``None``. Copies of this entry
        other than the one kept are deleted.
    """
    found = (
        find_copies(slack, channel=channel, thread_ts=thread_ts, entry_id=entry.entry_id)
        if entry.may_have_been_sent
        else []
    )
    if known is None and not found and post:
        response = slack.chat_postMessage(
            channel=channel, thread_ts=thread_ts, metadata=marker(entry.entry_id, version=version), **message
        )
        found = [PostedCopy(str(response["channel"]), str(response["ts"]), version)]
    candidate = known or (found[0] if found else None)
    if candidate is None:
        return None  # nothing posted, nothing to post: ``deliver`` completes the entry
    key, fields = record(candidate) if record is not None else (None, [])
    if candidate is known:
        fields = fields[:1]  # recorded already: only check it
    kept = outbox.complete_post(entry, copy=identify(candidate), record_key=key, record=fields, listing=listing)
    for extra in found:
        if identify(extra) != kept:
            _delete(slack, extra)
    return candidate if candidate is not known and identify(candidate) == kept else None


def _delete(slack: WebClient, copy: PostedCopy) -> None:
    """Remove a copy nobody tracks (so its buttons cannot be clicked)."""
    try:
        slack.chat_delete(channel=copy.channel, ts=copy.ts)
    except SlackApiError as error:
        if error.response.get("error") != "message_not_found":
            raise
    logger.info("channel=<%s>, ts=<%s> | extra copy deleted", copy.channel, copy.ts)
