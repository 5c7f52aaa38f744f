"""Reading messages back: ``conversations.replies`` (a thread) and ``conversations.history`` (a channel), paged."""

from loopback_slack.calls import SlackError
from loopback_slack.methods import JsonDict, MethodTable
from loopback_slack.parsing import truthy
from loopback_slack.state import WorkspaceState, ts_key


def replies(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``conversations.replies``: one page of the thread of ``ts`` (the whole thread when ``ts`` is a reply's)."""
    channel = state.resolve_channel(args)
    ts = str(args.get("ts") or "")
    parent = state.find(channel, ts)
    root = str(parent.get("thread_ts") or ts) if parent else ts  # the whole thread for a reply's ts too
    thread = state.channel_messages(channel, root)
    if not thread:  # neither the parent nor a reply (a thread whose parent went keeps its replies)
        raise SlackError("thread_not_found")
    return one_page(thread, args)


def history(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``conversations.history``: one page of the channel's top-level messages, newest first."""
    channel = state.resolve_channel(args)
    top_level = [
        m for m in state.channel_messages(channel, None) if m.get("thread_ts") in (None, m["ts"])
    ]  # as in Slack, replies stay in their threads (except the parent)
    return one_page(list(reversed(top_level)), args)  # newest first


def one_page(listed: list[JsonDict], args: JsonDict) -> JsonDict:
    """One page of ``listed`` as conversations.replies / .history answer it.

    ``oldest`` / ``latest`` bound the ts (exclusive unless ``inclusive``), ``limit`` and ``cursor`` page, and
    ``metadata`` is left out unless ``include_all_metadata`` is set, as Slack does.
    """
    inclusive = truthy(args.get("inclusive"))
    if args.get("oldest"):
        oldest = ts_key(str(args["oldest"]))
        listed = [m for m in listed if ts_key(m["ts"]) > oldest or (inclusive and ts_key(m["ts"]) == oldest)]
    if args.get("latest"):
        latest = ts_key(str(args["latest"]))
        listed = [m for m in listed if ts_key(m["ts"]) < latest or (inclusive and ts_key(m["ts"]) == latest)]
    if not truthy(args.get("include_all_metadata")):
        listed = [{k: v for k, v in m.items() if k != "metadata"} for m in listed]
    cursor = str(args.get("cursor") or "offset:0")
    if not (cursor.startswith("offset:") and cursor.removeprefix("offset:").isdigit()):
        raise SlackError("invalid_cursor")
    start = int(cursor.removeprefix("offset:"))
    limit = int(args.get("limit") or 0)
    end = start + limit if limit > 0 else len(listed)
    more = end < len(listed)
    return {
        "messages": listed[start:end],
        "has_more": more,
        "response_metadata": {"next_cursor": f"offset:{end}" if more else ""},
    }


METHODS: MethodTable = {"conversations.replies": replies, "conversations.history": history}
