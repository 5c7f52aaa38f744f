"""Enterprise Grid orgs: an org-wide install's token, what Slack answers for it, and which workspace a call is for.

Slack's shapes (https://api.slack.com/enterprise/apps/reference): ``oauth.v2.access`` for an org-wide install names
the org in ``enterprise``, no ``team``, and ``is_enterprise_install: true``; ``auth.test`` with the org's token names
the org (``enterprise_id``, ``is_enterprise_install: true``). One org token speaks in every workspace of the org.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from loopback_slack.methods import JsonDict
from loopback_slack.state import WorkspaceState


@dataclass(frozen=True)
class Org:
    """An Enterprise Grid org: its workspaces, and the bot of its org-wide install."""

    enterprise_id: str
    name: str
    token: str
    teams: tuple[str, ...]
    bot_user_id: str
    bot_id: str


@dataclass(frozen=True)
class InstallOffer:
    """What one install code installs: a workspace (``team_id``, in org ``enterprise_id`` if any) or a whole org."""

    team_id: str | None
    enterprise_id: str | None
    installer: str


def workspace_for(org: Org, workspaces: Mapping[str, WorkspaceState], args: JsonDict) -> WorkspaceState:
    """The workspace of ``org`` a call with its token acts on.

    The call's ``team_id``, else the workspace that knows its channel or user (ids are unique across a Grid), else the
    org's first.
    """
    mine = [workspaces[team] for team in org.teams]
    team_id = str(args.get("team_id") or "")
    if team_id in org.teams:
        return workspaces[team_id]
    channel = str(args.get("channel") or "")
    user = str(args.get("user") or args.get("user_id") or (channel if channel[:1] in {"U", "W"} else ""))
    for state in mine:
        if channel and (channel in state.channel_members or channel in state.messages):
            return state
    for state in mine:
        if user and user in state.users:
            return state
    return mine[0]


def auth_test(org: Org, app_id: str) -> JsonDict:
    """``auth.test`` with the org's token: the org, and that the install is org-wide."""
    return {
        "url": f"https://{org.name.lower().replace(' ', '-')}.enterprise.slack.com/",
        "team": org.name,
        "user": "signoff",
        "team_id": org.enterprise_id,
        "user_id": org.bot_user_id,
        "bot_id": org.bot_id,
        "app_id": app_id,
        "enterprise_id": org.enterprise_id,
        "is_enterprise_install": True,
    }


def org_wide_access(org: Org, *, app_id: str, installer: str) -> JsonDict:
    """``oauth.v2.access`` for an org-wide install: the org's token, no team."""
    return {
        "ok": True,
        "access_token": org.token,
        "token_type": "bot",
        "scope": "app_mentions:read,chat:write,commands",
        "bot_user_id": org.bot_user_id,
        "app_id": app_id,
        "team": None,
        "enterprise": {"id": org.enterprise_id, "name": org.name},
        "is_enterprise_install": True,
        "authed_user": {"id": installer},
    }
