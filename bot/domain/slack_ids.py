"""Slack ids as validated field types (policy files, rotations)."""

import re
from typing import Annotated, Final

from pydantic import AfterValidator, StrictStr
from pydantic_core import PydanticCustomError

# \A..\Z and [0-9], not ^..$ and \d: "U0ALICE\n" or Arabic-Indic digits are no Slack id. Ids are short
# (about 11 characters): the bound keeps a hostile one from being stored, indexed, and quoted back whole.
_USER_ID: Final = re.compile(r"\A[UW][A-Z0-9]{2,40}\Z")
_USERGROUP_ID: Final = re.compile(r"\AS[A-Z0-9]{2,40}\Z")


def _user_id(value: str) -> str:
    if not _USER_ID.match(value):
        raise PydanticCustomError(
            "slack_user_id",
            "'{value}' is not a Slack user id (U or W, then capital letters and digits, e.g. U012AB3CD)",
            {"value": value[:100]},
        )
    return value


def _usergroup_id(value: str) -> str:
    if not _USERGROUP_ID.match(value):
        raise PydanticCustomError(
            "slack_usergroup_id",
            "'{value}' is not a Slack user group id (S, then capital letters and digits, e.g. S0614TZR7)",
            {"value": value[:100]},
        )
    return value


UserId = Annotated[StrictStr, AfterValidator(_user_id)]
UsergroupId = Annotated[StrictStr, AfterValidator(_usergroup_id)]


_CHANNEL_ID: Final = re.compile(r"\A[CGD][A-Z0-9]{2,40}\Z")
_TS: Final = re.compile(r"\A[0-9]{1,12}\.[0-9]{1,9}\Z")


def _channel_id(value: str) -> str:
    if not _CHANNEL_ID.match(value):
        raise PydanticCustomError(
            "slack_channel_id",
            "'{value}' is not a Slack channel id (C, G or D, then capital letters and digits, e.g. C024BE91L)",
            {"value": value[:100]},
        )
    return value


def _ts(value: str) -> str:
    if not _TS.match(value):
        raise PydanticCustomError(
            "slack_ts",
            "'{value}' is not a Slack message ts (seconds.micros, e.g. 1700000000.000100)",
            {"value": value[:100]},
        )
    return value


ChannelId = Annotated[StrictStr, AfterValidator(_channel_id)]
MessageTs = Annotated[StrictStr, AfterValidator(_ts)]


def is_user_id(value: str) -> bool:
    """Whether ``value`` looks like a Slack user id."""
    return bool(_USER_ID.match(value))
