"""Schemathesis hooks for the API's fuzz test (loaded through ``SCHEMATHESIS_HOOKS``).

A valid ``wait`` holds the call up to 60 s by design; drawn at random it would spend the test's whole budget
asleep. A valid wait over a second is shortened to one: the long-poll is still taken and answered, and every
invalid value the fuzzer draws is sent as drawn.
"""

import re
from typing import Any

import schemathesis

from bot.api.openapi import WAIT_PATTERN

_VALID_WAIT = re.compile(WAIT_PATTERN)
_AT_MOST_A_SECOND = ("0", "0s", "0m", "1", "1s")


@schemathesis.hook
def map_query(_ctx: Any, query: dict[str, Any] | None) -> dict[str, Any] | None:
    """The query with a valid ``wait`` of more than a second cut to ``1``."""
    wait = (query or {}).get("wait")
    if query and isinstance(wait, str) and _VALID_WAIT.fullmatch(wait) and wait not in _AT_MOST_A_SECOND:
        return {**query, "wait": "1"}
    return query
