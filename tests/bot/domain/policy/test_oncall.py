"""On-call rotation resolution: hand-offs, time zones, daylight saving, short shifts."""

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from bot.domain.policy.oncall import Rotation, on_call

BERLIN = ZoneInfo("Europe/Berlin")


def weekly() -> Rotation:
    return Rotation(
        members=("U0ALICE", "U0BOB", "U0CAROL"),
        shift="7d",
        handoff=time(9, 0),
        timezone="Europe/Berlin",
        starts=date(2026, 11, 2),  # a Monday
    )


def test_the_first_member_holds_the_first_shift_from_its_handoff() -> None:
    rotation = weekly()
    assert on_call(rotation, datetime(2026, 11, 2, 9, 0, tzinfo=BERLIN)) == "U0ALICE"
    assert on_call(rotation, datetime(2026, 11, 9, 8, 59, tzinfo=BERLIN)) == "U0ALICE"


def test_the_handoff_happens_at_the_local_handoff_time() -> None:
    rotation = weekly()
    assert on_call(rotation, datetime(2026, 11, 9, 8, 59, 59, tzinfo=BERLIN)) == "U0ALICE"
    assert on_call(rotation, datetime(2026, 11, 9, 9, 0, tzinfo=BERLIN)) == "U0BOB"
    assert on_call(rotation, datetime(2026, 11, 16, 9, 0, tzinfo=BERLIN)) == "U0CAROL"
    assert on_call(rotation, datetime(2026, 11, 23, 9, 0, tzinfo=BERLIN)) == "U0ALICE"  # wraps around


def test_the_same_instant_resolves_in_the_rotations_own_time_zone() -> None:
    rotation = weekly()
    # 07:30 UTC on the hand-off Monday is 08:30 in Berlin (winter): still the old shift.
    assert on_call(rotation, datetime(2026, 11, 9, 7, 30, tzinfo=UTC)) == "U0ALICE"
    # 08:00 UTC is 09:00 in Berlin: the new shift.
    assert on_call(rotation, datetime(2026, 11, 9, 8, 0, tzinfo=UTC)) == "U0BOB"
    tokyo = weekly().model_copy(update={"timezone": "Asia/Tokyo"})
    # 23:30 UTC on Sunday 8 Nov is 08:30 Monday in Tokyo (before its hand-off), 00:30 UTC is 09:30.
    assert on_call(tokyo, datetime(2026, 11, 8, 23, 30, tzinfo=UTC)) == "U0ALICE"
    assert on_call(tokyo, datetime(2026, 11, 9, 0, 30, tzinfo=UTC)) == "U0BOB"


def test_daylight_saving_does_not_move_a_handoff() -> None:
    daily = Rotation(
        members=("U0ALICE", "U0BOB"), shift="1d", handoff=time(9, 0), timezone="Europe/Berlin", starts=date(2026, 3, 27)
    )
    # Berlin moves to summer time on 29 March 2026; hand-offs stay at 09:00 local.
    assert on_call(daily, datetime(2026, 3, 29, 8, 59, tzinfo=BERLIN)) == "U0BOB"
    assert on_call(daily, datetime(2026, 3, 29, 9, 0, tzinfo=BERLIN)) == "U0ALICE"
    assert on_call(daily, datetime(2026, 3, 30, 9, 0, tzinfo=BERLIN)) == "U0BOB"


def test_short_shifts_count_elapsed_time() -> None:
    twelve_hours = Rotation(members=("U0ALICE", "U0BOB"), shift="12h", handoff=time(8, 0), starts=date(2026, 1, 1))
    assert on_call(twelve_hours, datetime(2026, 1, 1, 19, 59, tzinfo=UTC)) == "U0ALICE"
    assert on_call(twelve_hours, datetime(2026, 1, 1, 20, 0, tzinfo=UTC)) == "U0BOB"
    assert on_call(twelve_hours, datetime(2026, 1, 2, 8, 0, tzinfo=UTC)) == "U0ALICE"


def test_before_the_start_the_rotation_runs_backwards() -> None:
    assert on_call(weekly(), datetime(2026, 11, 1, 12, 0, tzinfo=BERLIN)) == "U0CAROL"


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"timezone": "Mars/Olympus"}, "unknown time zone"),
        ({"shift": "5h"}, "divide a day evenly"),
        ({"members": ()}, "at least 1"),
        ({"members": ("alice",)}, "not a Slack user id"),
        ({"shift": "soon"}, "expected a duration"),
    ],
)
def test_bad_rotations_are_refused_with_the_reason(changes: dict[str, object], problem: str) -> None:
    fields: dict[str, object] = {"members": ("U0ALICE",), "shift": "7d", "starts": date(2026, 1, 5), **changes}
    with pytest.raises(ValidationError, match=problem):
        Rotation.model_validate(fields)
