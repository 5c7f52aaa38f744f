"""Slack ids as validated field types (policy files, rotations)."""

import re
from typing import Annotated, Final

from pydantic import AfterValidator, StrictStr
from pydantic_core import PydanticCustomError

_USER_ID: Final = re.compile(r"^[UW][A-Z0-9]{2,}$")
_USERGROUP_ID: Final = re.compile(r"^S[A-Z0-9]{2,}$")


def _user_id(value: str) -> str:
    if not _USER_ID.match(value):
        raise PydanticCustomError(
            "slack_user_id",
            "'{value}' is not a Slack user id (U or W, then capital letters and digits, e.g. U012AB3CD)",
            {"value": value},
        )
    return value


def _usergroup_id(value: str) -> str:
    if not _USERGROUP_ID.match(value):
        raise PydanticCustomError(
            "slack_usergroup_id",
            "'{value}' is not a Slack user group id (S, then capital letters and digits, e.g. S0614TZR7)",
            {"value": value},
        )
    return value


UserId = Annotated[StrictStr, AfterValidator(_user_id)]
UsergroupId = Annotated[StrictStr, AfterValidator(_usergroup_id)]
