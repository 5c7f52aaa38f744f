"""On-call rotations: who is on call at a given moment.

A rotation hands over at a fixed local time (``handoff``) in its time zone; each member holds
``shift`` in turn, the first starting at the hand-off on the ``starts`` date. Shifts of whole
days are counted in local calendar days, so daylight-saving changes never move a hand-off;
shorter shifts are counted in elapsed time from the first hand-off.
"""

from datetime import date, datetime, time, timedelta
from typing import Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from bot.domain.durations import Seconds
from bot.domain.slack_ids import UserId

_DAY = 86_400


class Rotation(BaseModel):
    """One rotation, as the policy file defines it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    members: tuple[UserId, ...] = Field(min_length=1)
    """Who is on call, in turn."""
    shift: Seconds
    """How long each member holds it: whole days, or a duration that divides a day (``8h``, ``12h``)."""
    handoff: time = time(9, 0)
    """The local time of each hand-off."""
    timezone: str = "UTC"
    """The rotation's time zone (an IANA name, such as ``Europe/Berlin``)."""
    starts: date
    """The date of the first hand-off, when the first member's shift begins."""

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise PydanticCustomError("timezone", "unknown time zone '{value}'", {"value": value}) from None
        return value

    @model_validator(mode="after")
    def _whole_days_or_divides_a_day(self) -> Self:
        if self.shift % _DAY and _DAY % self.shift:
            raise PydanticCustomError("shift", "a shift must be whole days or divide a day evenly (e.g. 8h, 12h, 7d)")
        return self


def on_call(rotation: Rotation, at: datetime) -> str:
    """The member on call at ``at`` (an aware datetime)."""
    zone = ZoneInfo(rotation.timezone)
    local = at.astimezone(zone)
    first_handoff = datetime.combine(rotation.starts, rotation.handoff, tzinfo=zone)
    if rotation.shift % _DAY == 0:
        todays_handoff = datetime.combine(local.date(), rotation.handoff, tzinfo=zone)
        shift_day = local.date() if local >= todays_handoff else local.date() - timedelta(days=1)
        index = (shift_day - rotation.starts).days // (rotation.shift // _DAY)
    else:
        index = int((at - first_handoff).total_seconds() // rotation.shift)
    return rotation.members[index % len(rotation.members)]
