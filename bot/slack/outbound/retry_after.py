"""How long a 429 asks the outbox to wait: Slack's ``Retry-After``, read so that no value can break delivery.

Slack sends whole seconds. A proxy on the way may send an HTTP date instead (both are valid HTTP), and a
broken one anything at all. A value that cannot be read waits ``DEFAULT_S``. Every wait is at least
``MIN_S`` (a stale date or a zero would have the retry hit the limit again at once) and at most ``MAX_S``:
the wait pauses the whole channel, and a garbled header must not silence it for days.
"""

import math
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any, Final

DEFAULT_S: Final = 1.0
MIN_S: Final = 1.0
MAX_S: Final = 300.0


def retry_after_s(headers: Mapping[str, Any], *, now_s: float) -> float:
    """Seconds to wait for a 429 with ``headers`` (any case of ``Retry-After``), ``now_s`` being the wall clock."""
    value = next((value for name, value in headers.items() if name.lower() == "retry-after"), None)
    if isinstance(value, list | tuple):  # a client that keeps repeated headers as a list: the first one counts
        value = value[0] if value else None
    if not isinstance(value, str | int | float):
        return DEFAULT_S
    try:
        seconds = _seconds(str(value).strip(), now_s=now_s)
    except (ArithmeticError, LookupError, TypeError, ValueError):  # e.g. a date whose year overflows
        return DEFAULT_S
    if seconds is None or not math.isfinite(seconds):
        return DEFAULT_S
    return min(max(seconds, MIN_S), MAX_S)


def _seconds(text: str, *, now_s: float) -> float | None:
    try:
        return float(text)
    except ValueError:
        pass
    when = parsedate_to_datetime(text)
    return when.timestamp() - now_s if when.tzinfo is not None else None
