"""Which Web API client speaks for a workspace: one token for a single-workspace bot, an installation's for many.

Every Slack call the bot makes names the workspace it is for (the team of the request it serves, of the
outbox entry it delivers), so a workspace's token never answers another's request.
"""

from typing import Protocol

from slack_sdk import WebClient

from bot.domain.errors import SignoffError


class NotInstalled(SignoffError, LookupError):
    """The app is not (or no longer) installed in the workspace: nothing can be sent there."""

    def __init__(self, team_id: str) -> None:
        """Name the workspace ``team_id`` the app is not installed in."""
        super().__init__(f"team_id=<{team_id}> | the app is not installed in this workspace")
        self.team_id = team_id


class SlackClients(Protocol):
    """Gives the client whose token speaks for a workspace.

    Implementations need ``for_team`` and ``forget``.
    """

    def for_team(self, team_id: str) -> WebClient:
        """The client for ``team_id``.

        Raises:
            NotInstalled: No installation speaks for ``team_id``.
        """
        ...

    def forget(self, team_id: str) -> None:
        """Drop what is kept for ``team_id`` (Slack refused its token, or the app left it): asked anew next time."""
        ...


class OneWorkspace:
    """The single-workspace bot (``SLACK_BOT_TOKEN``): one client answers for its one workspace, whatever is asked."""

    def __init__(self, client: WebClient) -> None:
        """Keep the one client."""
        self._client = client

    def for_team(self, team_id: str) -> WebClient:
        """The one client."""
        return self._client

    def forget(self, team_id: str) -> None:
        """Nothing to forget: the one token is the settings'."""
