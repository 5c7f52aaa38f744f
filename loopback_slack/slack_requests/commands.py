"""The slash-command request Slack sends an app: form fields, all strings."""

from loopback_slack.slack_requests.team import DEFAULT_TEAM, VERIFICATION_TOKEN, Team, new_trigger_id, next_id


def slash_command(
    *,
    command: str,
    user_id: str,
    channel_id: str,
    text: str = "",
    team: Team = DEFAULT_TEAM,
    user_name: str | None = None,
    channel_name: str = "general",
    trigger_id: str | None = None,
    response_url: str | None = None,
) -> dict[str, str]:
    """The form fields of a slash command invocation in ``team`` (all strings, as Slack sends them)."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team.team_id,
        "team_domain": team.team_domain,
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name or user_id.lower(),
        "command": command,
        "text": text,
        "api_app_id": team.app_id,
        "is_enterprise_install": "false",
        "response_url": response_url or f"https://hooks.slack.com/commands/{team.team_id}/{1_000_000 + next_id()}/x",
        "trigger_id": trigger_id or new_trigger_id(),
    }
