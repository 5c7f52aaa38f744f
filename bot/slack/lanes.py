"""Which outbox entries must keep their order: one *lane* per Slack conversation.

Entries for one channel (or one person's direct messages, or one App Home) are delivered one after
the other, in the order they were queued; different lanes are delivered in parallel. An entry that
names no conversation gets a lane of its own.
"""

from collections.abc import Sequence

from bot.domain.records import channel_of_session
from bot.store.outbox import OutboxEntry


def lane_of(entry: OutboxEntry) -> str:
    """The conversation ``entry`` writes to."""
    payload = entry.payload
    if entry.kind == "publish_home":
        return f"home:{payload.get('user')}"
    if entry.kind == "post_approval_copy":
        return str(payload.get("user"))  # the direct messages with them, as a post to ``channel=<user>``
    channel = payload.get("channel")
    if isinstance(channel, str):
        return channel
    session_id = payload.get("session_id")
    if isinstance(session_id, str):
        return channel_of_session(session_id) or session_id
    return f"entry:{entry.entry_id}"


def lanes(entries: Sequence[OutboxEntry]) -> list[tuple[str, list[OutboxEntry]]]:
    """``entries`` grouped by lane, each lane in queued order (entry ids are ordered by the time they were queued)."""
    grouped: dict[str, list[OutboxEntry]] = {}
    for entry in entries:
        grouped.setdefault(lane_of(entry), []).append(entry)
    return [(lane, sorted(queued, key=lambda entry: entry.entry_id)) for lane, queued in grouped.items()]
