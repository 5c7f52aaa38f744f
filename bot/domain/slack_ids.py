"""Slack ids as validated field types (policy files, rotations)."""

import re
from typing import Annotated, Final

from pydantic import AfterValidator, StrictStr

from bot.domain.patterns import published, whole_match

# [0-9], not \d: Arabic-Indic digits are no Slack id; matched whole, so "U0ALICE\n" is none either. Ids are short
# (about 11 characters): the bound keeps a hostile one from being stored, indexed, and quoted back whole.
USER_ID_PATTERN: Final = "^[UW][A-Z0-9]{2,40}$"
USERGROUP_ID_PATTERN: Final = "^S[A-Z0-9]{2,40}$"
CHANNEL_ID_PATTERN: Final = "^[CGD][A-Z0-9]{2,40}$"
TS_PATTERN: Final = "^[0-9]{1,12}[.][0-9]{1,9}$"
_USER_ID: Final = re.compile(USER_ID_PATTERN)

_user_id = whole_match(
    USER_ID_PATTERN,
    code="slack_user_id",
    message="{value} is not a Slack user id (U or W, then capital letters and digits, e.g. U012AB3CD)",
)
_usergroup_id = whole_match(
    USERGROUP_ID_PATTERN,
    code="slack_usergroup_id",
    message="{value} is not a Slack user group id (S, then capital letters and digits, e.g. S0614TZR7)",
)
_channel_id = whole_match(
    CHANNEL_ID_PATTERN,
    code="slack_channel_id",
    message="{value} is not a Slack channel id (C, G or D, then capital letters and digits, e.g. C024BE91L)",
)
_ts = whole_match(
    TS_PATTERN, code="slack_ts", message="{value} is not a Slack message ts (seconds.micros, e.g. 1700000000.000100)"
)

UserId = Annotated[StrictStr, AfterValidator(_user_id), published(USER_ID_PATTERN)]
UsergroupId = Annotated[StrictStr, AfterValidator(_usergroup_id), published(USERGROUP_ID_PATTERN)]
ChannelId = Annotated[StrictStr, AfterValidator(_channel_id), published(CHANNEL_ID_PATTERN)]
MessageTs = Annotated[StrictStr, AfterValidator(_ts), published(TS_PATTERN)]


def is_user_id(value: str) -> bool:
    """Whether ``value`` looks like a Slack user id."""
    return _USER_ID.fullmatch(value) is not None


TEAM_ID_PATTERN: Final = "^[T][A-Z0-9]{2,40}$"
_TEAM_ID: Final = re.compile(TEAM_ID_PATTERN)


def team_id_problem(value: str) -> str | None:
    """Why ``value`` is not a Slack workspace (team) id, or ``None``."""
    if _TEAM_ID.fullmatch(value):
        return None
    return f"{value[:60]!r} is not a Slack team id (T, then capital letters and digits, e.g. T012AB3CD)"
