"""The ids Slack puts in the requests it sends an app, and the fresh ids (timestamps, trigger ids) it mints."""

import hashlib
import itertools
import time
from dataclasses import dataclass
from typing import Any, Final

JsonDict = dict[str, Any]

# The defaults match LoopbackSlack's, so a Bolt app authorised against it sees a consistent workspace.
TEAM_ID = "T0TEST"
TEAM_DOMAIN = "test"
APP_ID = "A0APP"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
VERIFICATION_TOKEN = "legacy-verification-token"  # the deprecated `token` field Slack still sends

_counter = itertools.count(1)


@dataclass(frozen=True)
class Team:
    """The ids Slack puts in every request: the team (and its Enterprise Grid org), and the app and its bot user.

    Attributes:
        enterprise_id: The Enterprise Grid org the team is in (``None``: none).
        is_enterprise_install: The app is installed org-wide there (``authorizations[0]`` says so).
    """

    team_id: str = TEAM_ID
    team_domain: str = TEAM_DOMAIN
    app_id: str = APP_ID
    bot_user_id: str = BOT_USER_ID
    bot_id: str = BOT_ID
    enterprise_id: str | None = None
    is_enterprise_install: bool = False


DEFAULT_TEAM: Final = Team()
"""The test workspace, as ``LoopbackSlack`` answers for it by default."""


def next_id() -> int:
    """A number no request has used yet, for the ids Slack mints."""
    return next(_counter)


def new_ts() -> str:
    """A message or event timestamp for now, shaped like Slack's."""
    return f"{time.time():.6f}"


def new_trigger_id() -> str:
    """A fresh ``trigger_id``, shaped like Slack's."""
    n = next_id()
    return f"{1_000_000_000 + n}.{n:04d}.{hashlib.sha256(str(n).encode()).hexdigest()[:32]}"


def new_response_url(team_id: str) -> str:
    """A fresh interaction ``response_url`` on hooks.slack.com."""
    n = next_id()
    return (
        f"https://hooks.slack.com/actions/{team_id}/{1_000_000 + n}/{hashlib.sha256(str(n).encode()).hexdigest()[:24]}"
    )
