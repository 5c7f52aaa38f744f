"""Reading a 429's Retry-After: Slack's seconds, an HTTP date, or whatever a broken proxy sends."""

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from bot.slack.outbound.retry_after import DEFAULT_S, MAX_S, MIN_S, retry_after_s

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "30"}, 30.0),
        ({"RETRY-AFTER": " 2 "}, 2.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"Retry-After": ["4", "9"]}, 4.0),
        ({"Retry-After": 12}, 12.0),
        ({"Retry-After": "0"}, MIN_S),
        ({"Retry-After": "-5"}, MIN_S),
        ({"Retry-After": "86400"}, MAX_S),
        ({"Retry-After": "soon"}, DEFAULT_S),
        ({"Retry-After": ""}, DEFAULT_S),
        ({"Retry-After": "nan"}, DEFAULT_S),
        ({"Retry-After": "inf"}, DEFAULT_S),
        ({"Retry-After": []}, DEFAULT_S),
        ({"Retry-After": None}, DEFAULT_S),
        ({}, DEFAULT_S),
        ({"Retry-After": "Mon, 01 Jan 99999999999999999999 00:00:00 GMT"}, DEFAULT_S),
        ({"Retry-After": "1 Jan 2025 99999999999999999999:00:00 GMT"}, DEFAULT_S),
        ({"Retry-After": "Mon, 01 Jan 2025 00:00:00 +99999999999999999999"}, DEFAULT_S),
        ({"Retry-After": "1e999"}, DEFAULT_S),
    ],
)
def test_retry_after_is_read_as_seconds_within_bounds(headers: dict[str, object], expected: float) -> None:
    assert retry_after_s(headers, now_s=NOW) == expected


def test_an_http_date_waits_until_that_moment() -> None:
    in_a_minute = format_datetime(datetime.fromtimestamp(NOW + 60, UTC), usegmt=True)
    a_minute_ago = format_datetime(datetime.fromtimestamp(NOW - 60, UTC), usegmt=True)

    assert retry_after_s({"Retry-After": in_a_minute}, now_s=NOW) == 60.0
    assert retry_after_s({"Retry-After": a_minute_ago}, now_s=NOW) == MIN_S  # stale: retried soon, not at once
    assert retry_after_s({"Retry-After": "Wed, 02 Dec 2026 12:00:00"}, now_s=NOW) == DEFAULT_S  # no zone: unread
