"""manifest.yml imports as a Slack app manifest and matches what the bot listens to and calls."""

from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from bot.render import action_ids as ids
from bot.slack.edge.oauth import BOT_SCOPES

ROOT = Path(__file__).resolve().parent.parent


def _manifest() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "manifest.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_the_manifest_has_the_sections_slack_requires() -> None:
    manifest = _manifest()
    assert manifest["display_information"]["name"]
    assert manifest["features"]["bot_user"]["display_name"]
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True  # escalation DMs


def test_scopes_are_exactly_the_ones_the_bot_uses() -> None:
    # app_mention events, chat.postMessage/update/postEphemeral, /agent, thread replies in public and
    # private channels, usergroups.users.list, the bot's own DMs (conversations.history finds a lost copy),
    # conversations.members of public and private channels; an OAuth install asks for the same.
    scopes = _manifest()["oauth_config"]["scopes"]["bot"]
    assert sorted(scopes) == sorted(BOT_SCOPES)
    assert set(BOT_SCOPES) >= {"chat:write", "commands", "app_mentions:read", "usergroups:read", "channels:read"}


def test_events_and_the_command_match_the_listeners() -> None:
    manifest = _manifest()
    assert set(manifest["settings"]["event_subscriptions"]["bot_events"]) == {
        "app_home_opened",
        "app_mention",
        "message.channels",
        "message.groups",
        "app_uninstalled",
        "tokens_revoked",
        "team_access_revoked",
    }
    commands = {command["command"] for command in manifest["features"]["slash_commands"]}
    assert commands == {ids.AGENT_COMMAND, ids.APPROVALS_COMMAND}


def test_the_http_request_urls_are_documented() -> None:
    text = (ROOT / "manifest.yml").read_text()
    assert text.count("/slack/events") >= 3
