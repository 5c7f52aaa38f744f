"""The slash-command request Slack sends an app: form fields, all strings."""

from bot.loopback_slack.slack_requests.team import (
    APP_ID,
    TEAM_DOMAIN,
    TEAM_ID,
    VERIFICATION_TOKEN,
    new_trigger_id,
    next_id,
)


def slash_command(
    *,
    command: str,
    user_id: str,
    channel_id: str,
    text: str = "",
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    user_name: str | None = None,
    channel_name: str = "general",
    trigger_id: str | None = None,
    response_url: str | None = None,
    team_domain: str = TEAM_DOMAIN,
) -> dict[str, str]:
    """The form fields of a slash command invocation (all strings, as Slack sends them)."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "team_domain": team_domain,
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name or user_id.lower(),
        "command": command,
        "text": text,
        "api_app_id": api_app_id,
        "is_enterprise_install": "false",
        "response_url": response_url or f"https://hooks.slack.com/commands/{team_id}/{1_000_000 + next_id()}/x",
        "trigger_id": trigger_id or new_trigger_id(),
    }
