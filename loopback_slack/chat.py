"""``chat.*``: posting, updating and deleting the app's messages, ephemerals, permalinks.

And what a POST to a response URL does to them.
"""

import copy

from loopback_slack.calls import SlackError
from loopback_slack.methods import JsonDict, MethodTable
from loopback_slack.parsing import truthy
from loopback_slack.state import WorkspaceState


def post_message(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``chat.postMessage``: store a message of the app in the channel and answer with it."""
    channel = state.resolve_channel(args)
    state.check_message(args)
    if not (args.get("text") or args.get("blocks") or args.get("attachments")):
        raise SlackError("no_text")
    message = state.store_bot_message(channel, args)
    return {"channel": channel, "ts": message["ts"], "message": copy.deepcopy(message)}


def update(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``chat.update``: replace the fields given of one of the app's messages and mark it edited."""
    channel = state.resolve_channel(args)
    state.check_message(args)
    message = state.find(channel, str(args.get("ts") or ""))
    if message is None:
        raise SlackError("message_not_found")
    if message.get("user") != state.identity.bot_user_id:
        raise SlackError("cant_update_message")
    # As in Slack: fields left out keep their previous value; an empty list clears blocks / attachments.
    for name in ("text", "blocks", "attachments", "metadata"):
        if name in args:
            message[name] = args[name]
    message["edited"] = {"user": state.identity.bot_user_id, "ts": state.next_ts()}
    return {"channel": channel, "ts": message["ts"], "text": message["text"], "message": copy.deepcopy(message)}


def delete(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``chat.delete``: mark a message deleted, so no read finds it any more."""
    channel = state.resolve_channel(args)
    message = state.find(channel, str(args.get("ts") or ""))
    if message is None:
        raise SlackError("message_not_found")
    message["_deleted"] = True
    return {"channel": channel, "ts": message["ts"]}


def post_ephemeral(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``chat.postEphemeral``: keep a message only ``user`` sees, stamped with its own ``message_ts``."""
    channel = state.resolve_channel(args)
    state.check_message(args)
    user = str(args.get("user") or "")
    if not user:
        raise SlackError("user_not_found")
    if not (args.get("text") or args.get("blocks") or args.get("attachments")):
        raise SlackError("no_text")
    ephemeral: JsonDict = {"channel": channel, "user": user, "text": str(args.get("text") or "")}
    for name in ("blocks", "attachments", "thread_ts"):
        if name in args:
            ephemeral[name] = args[name]
    ephemeral["message_ts"] = state.next_ts()
    state.ephemerals.append(ephemeral)
    return {"message_ts": ephemeral["message_ts"]}


def get_permalink(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``chat.getPermalink``: the message's link, naming its thread when it is a reply."""
    channel = state.resolve_channel(args)
    message = state.find(channel, str(args.get("message_ts") or ""))
    if message is None:
        raise SlackError("message_not_found")
    permalink = f"https://test.slack.com/archives/{channel}/p{message['ts'].replace('.', '')}"
    thread_ts = message.get("thread_ts")
    if thread_ts and thread_ts != message["ts"]:
        permalink += f"?thread_ts={thread_ts}&cid={channel}"
    return {"channel": channel, "permalink": permalink}


METHODS: MethodTable = {
    "chat.postMessage": post_message,
    "chat.update": update,
    "chat.delete": delete,
    "chat.postEphemeral": post_ephemeral,
    "chat.getPermalink": get_permalink,
}


def apply_response_url(
    state: WorkspaceState, target: tuple[str | None, str | None, str | None], args: JsonDict
) -> None:
    """A POST to the response URL made for ``(channel, message_ts, user)``.

    Replace or delete that message, post ``in_channel``, or else show ``user`` an ephemeral message.
    """
    channel, message_ts, user = target
    existing = state.messages.get(channel or "", {}).get(message_ts or "")
    if truthy(args.get("delete_original")) and existing is not None:
        existing["_deleted"] = True
    elif truthy(args.get("replace_original")) and existing is not None:
        for name in ("text", "blocks", "attachments"):
            if name in args:
                existing[name] = args[name]
        existing["edited"] = {"user": state.identity.bot_user_id, "ts": state.next_ts()}
    elif args.get("response_type") == "in_channel" and channel is not None:
        state.store_bot_message(channel, args)
    else:
        state.ephemerals.append({"channel": channel, "user": user, **args, "message_ts": state.next_ts()})
