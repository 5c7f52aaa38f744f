"""Who is who: the fake's identity, user, user group and conversation membership methods.

``auth.test``, ``users.info``, ``usergroups.users.list``, ``conversations.open`` and ``conversations.members``; and the
user objects ``users.info`` answers.
"""

import copy
import time
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from loopback_slack.calls import SlackError
from loopback_slack.methods import JsonDict, MethodTable
from loopback_slack.parsing import truthy
from loopback_slack.state import Identity, WorkspaceState


def user_object(
    identity: Identity,
    user_id: str,
    *,
    name: str | None = None,
    real_name: str | None = None,
    display_name: str | None = None,
    tz: str = "UTC",
    is_bot: bool = False,
    deleted: bool = False,
    email: str | None = None,
    **extra: Any,
) -> JsonDict:
    """A ``users.info`` user object (its time zone's offset and label as of now)."""
    name = name or user_id.lower()
    real_name = real_name if real_name is not None else name.title()
    try:
        now = datetime.now(ZoneInfo(tz))
        offset = now.utcoffset()
        tz_offset = int(offset.total_seconds()) if offset is not None else 0
        tz_label = now.tzname() or tz
    except (ZoneInfoNotFoundError, ValueError):
        tz_offset, tz_label = 0, tz
    profile: JsonDict = {
        "real_name": real_name,
        "real_name_normalized": real_name,
        "display_name": display_name if display_name is not None else name,
        "display_name_normalized": display_name if display_name is not None else name,
        "team": identity.team_id,
        "image_48": f"https://avatars.example/{user_id}_48.png",
    }
    if email is not None:
        profile["email"] = email
    if is_bot:
        profile["bot_id"] = identity.bot_id if user_id == identity.bot_user_id else f"B{user_id}"
    return {
        "id": user_id,
        "team_id": identity.team_id,
        "name": name,
        "deleted": deleted,
        "real_name": real_name,
        "tz": tz,
        "tz_label": tz_label,
        "tz_offset": tz_offset,
        "profile": profile,
        "is_admin": False,
        "is_owner": False,
        "is_bot": is_bot,
        "is_app_user": False,
        "updated": int(time.time()),
        **extra,
    }


def auth_test(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``auth.test``: who the bot is, and in which workspace."""
    me = state.identity
    return {
        "url": f"https://{me.team.lower().replace(' ', '-')}.slack.com/",
        "team": me.team,
        "user": "signoff",
        "team_id": me.team_id,
        "user_id": me.bot_user_id,
        "bot_id": me.bot_id,
        "is_enterprise_install": False,
    }


def users_info(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``users.info``: a copy of the user object (``user_not_found`` for an unknown id)."""
    user = state.users.get(str(args.get("user") or ""))
    if user is None:
        raise SlackError("user_not_found")
    return {"user": copy.deepcopy(user)}


def usergroup_members(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``usergroups.users.list``: the members of a user group (``no_such_subteam`` for an unknown one)."""
    group_id = str(args.get("usergroup") or "")
    if group_id not in state.usergroups:
        raise SlackError("no_such_subteam")
    return {"users": list(state.usergroups[group_id])}


def open_conversation(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``conversations.open``: a given channel as is, the DM of one user (noting it open), or a group DM of several."""
    if args.get("channel"):
        return {"channel": {"id": str(args["channel"])}, "no_op": True, "already_open": True}
    users = [u.strip() for u in str(args.get("users") or "").split(",") if u.strip()]
    if not users:
        raise SlackError("users_list_not_supplied")
    if any(u not in state.users for u in users):
        raise SlackError("user_not_found")
    if len(users) == 1:
        already_open = users[0] in state.open_dms
        state.open_dms.add(users[0])
        channel: JsonDict = {"id": state.dm_channel(users[0])}
        if truthy(args.get("return_im")):
            channel.update({"created": int(time.time()), "is_im": True, "is_org_shared": False, "user": users[0]})
        return {"channel": channel, "no_op": already_open, "already_open": already_open}
    return {"channel": {"id": "G" + "".join(sorted(users))}}


def channel_members(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``conversations.members``: one page of a channel's members, paged by an offset as ``cursor``."""
    members = state.channel_members.get(str(args.get("channel") or ""))
    if members is None:
        raise SlackError("channel_not_found")
    cursor = str(args.get("cursor") or "0")
    if not cursor.isdigit():
        raise SlackError("invalid_cursor")
    start = int(cursor)
    limit = int(args.get("limit") or 100)
    page = members[start : start + limit]
    after = start + len(page)
    return {"members": page, "response_metadata": {"next_cursor": str(after) if after < len(members) else ""}}


METHODS: MethodTable = {
    "auth.test": auth_test,
    "users.info": users_info,
    "usergroups.users.list": usergroup_members,
    "conversations.open": open_conversation,
    "conversations.members": channel_members,
}
