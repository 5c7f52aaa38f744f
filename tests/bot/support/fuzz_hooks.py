"""Schemathesis hooks for the API's fuzz test (loaded through ``SCHEMATHESIS_HOOKS``).

A valid ``wait`` holds the call up to 60 s (a long-poll) or 590 s (a Claude Code hook call, 290 s when left out)
by design; drawn at random it would spend the test's whole budget asleep. A valid wait over a second is
shortened to one, and a hook call without one gets one: the wait is still taken and answered, and every
invalid value the fuzzer draws is sent as drawn.
"""

import re
from typing import Any

import schemathesis

from bot.api.openapi import WAIT_PATTERN
from bot.domain.claude_hooks import WAIT_PATTERN as HOOK_WAIT_PATTERN

_VALID_WAIT = re.compile(WAIT_PATTERN)
_VALID_HOOK_WAIT = re.compile(HOOK_WAIT_PATTERN)
_AT_MOST_A_SECOND = ("0", "0s", "0m", "1", "1s")
_HOOK_PATH = "/v1/hooks/claude-code"


@schemathesis.hook
def map_query(ctx: Any, query: dict[str, Any] | None) -> dict[str, Any] | None:
    """The query with a valid ``wait`` of more than a second cut to ``1`` (and a hook call's missing one set)."""
    is_hook = ctx.operation is not None and ctx.operation.path == _HOOK_PATH
    valid = _VALID_HOOK_WAIT if is_hook else _VALID_WAIT
    wait = (query or {}).get("wait")
    if is_hook and wait is None:
        return {**(query or {}), "wait": "1"}
    if query and isinstance(wait, str) and valid.fullmatch(wait) and wait not in _AT_MOST_A_SECOND:
        return {**query, "wait": "1"}
    return query
