"""Durations in policy files: ``90`` (seconds), ``"90s"``, ``"15m"``, ``"2h"``, ``"1d"``, ``"1h30m"``."""

import re
from typing import Annotated, Any, Final

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

_PART: Final = re.compile(r"(\d+)\s*([dhms])")
_WHOLE: Final = re.compile(r"^\s*(?:\d+\s*[dhms]\s*)+$")
_SECONDS: Final = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}


def parse_duration(value: Any) -> int:
    """Whole seconds, at least one.

    Raises:
        PydanticCustomError: Not a duration (pydantic reports it at the field).
    """
    if isinstance(value, bool):
        raise PydanticCustomError(
            "duration", "expected a duration like 90, '15m' or '1h30m', got '{value}'", {"value": value}
        )
    if isinstance(value, int):
        seconds = value
    elif isinstance(value, str) and _WHOLE.match(value):
        seconds = sum(int(amount) * _SECONDS[unit] for amount, unit in _PART.findall(value))
    else:
        raise PydanticCustomError(
            "duration", "expected a duration like 90, '15m' or '1h30m', got '{value}'", {"value": value}
        )
    if seconds < 1:
        raise PydanticCustomError("duration", "a duration must be at least one second, got '{value}'", {"value": value})
    return seconds


Seconds = Annotated[int, BeforeValidator(parse_duration)]
"""A duration field: written as above, held as whole seconds."""
