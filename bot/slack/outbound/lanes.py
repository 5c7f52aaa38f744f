"""Which outbox entries must keep their order: one *lane* per Slack conversation.

A conversation is what a person reads as one sequence: a thread, a channel's top level, one person's
direct messages, one App Home. Its entries are delivered one after the other, in the order they were
queued; different lanes are delivered in parallel. Threads of one channel are lanes apart: a busy team
asks in one channel, and the replies of fifty threads waiting behind one another made every agent's
answer wait for the others' (bench.e2e). A thread's parent is posted before its replies are queued
(they need its ts). A request made through the HTTP API is a lane of its own in its channel. An entry that names no
conversation gets a lane of its own. Lanes carry the workspace: two
workspaces never share one.
"""

from collections.abc import Sequence

from bot.domain.records import thread_of_session
from bot.store.queues.outbox import REQUEST_CHANNEL, OutboxEntry


def lane_of(entry: OutboxEntry) -> str:
    """The conversation ``entry`` writes to, in its workspace (channel ids are a workspace's own)."""
    conversation = _conversation_of(entry)
    return f"{entry.team_id}:{conversation}" if entry.team_id else conversation


def _conversation_of(entry: OutboxEntry) -> str:
    payload = entry.payload
    if entry.kind == "publish_home":
        return f"home:{payload.get('user')}"
    if entry.kind == "post_approval_copy":
        return str(payload.get("user"))  # the direct messages with them, as a post to ``channel=<user>``
    channel = payload.get("channel")
    if isinstance(channel, str):
        thread_ts = payload.get("thread_ts")
        return f"{channel}/{thread_ts}" if isinstance(thread_ts, str) and thread_ts else channel
    session_id = payload.get("session_id")
    if isinstance(session_id, str):  # the approval message of a session, in the session's thread
        thread = thread_of_session(session_id)
        if thread is not None:
            return f"{thread[0]}/{thread[1]}"
        in_channel = payload.get(REQUEST_CHANNEL)
        # A lane of its own, in its channel: paused with the channel's other posts when Slack limits it.
        return f"{in_channel}/{session_id}" if isinstance(in_channel, str) and in_channel else session_id
    return f"entry:{entry.entry_id}"


def lanes(entries: Sequence[OutboxEntry]) -> list[tuple[str, list[OutboxEntry]]]:
    """``entries`` grouped by lane, each lane in queued order (entry ids are ordered by the time they were queued)."""
    grouped: dict[str, list[OutboxEntry]] = {}
    for entry in entries:
        grouped.setdefault(lane_of(entry), []).append(entry)
    return [(lane, sorted(queued, key=lambda entry: entry.entry_id)) for lane, queued in grouped.items()]
