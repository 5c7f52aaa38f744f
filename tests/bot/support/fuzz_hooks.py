"""Schemathesis hooks for the API's fuzz test (loaded through ``SCHEMATHESIS_HOOKS``).

A valid ``wait`` holds the call up to 60 s (a long-poll) or 590 s (a Claude Code hook call, 290 s when left out)
by design; drawn at random it would spend the test's whole budget asleep. A valid wait over a second is
shortened to one, and a hook call without one gets one: the wait is still taken and answered, and every
invalid value the fuzzer draws is sent as drawn.

A question's form (``schema``) must itself be a JSON Schema the form generator can make fields of, and its options'
labels must be distinct and fit Slack's 75 characters as shown (hidden characters spelled out): none is a JSON Schema
of the body can state (the document says so in words). A question drawn as valid gets a form that is one and labels
that are distinct and fit; one drawn as invalid is sent as drawn.
"""

import re
from typing import Any

import schemathesis
from schemathesis.generation import GenerationMode

from bot.api.openapi import WAIT_PATTERN
from bot.domain.claude_hooks import WAIT_PATTERN as HOOK_WAIT_PATTERN
from bot.domain.hidden_characters import reveal
from bot.domain.question_kinds import MAX_LABEL

_VALID_WAIT = re.compile(WAIT_PATTERN)
_VALID_HOOK_WAIT = re.compile(HOOK_WAIT_PATTERN)
_AT_MOST_A_SECOND = ("0", "0s", "0m", "1", "1s")
_HOOK_PATH = "/v1/hooks/claude-code"
_QUESTIONS_PATH = "/v1/questions"
_A_FORM = {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 1}}}


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


@schemathesis.hook
def before_call(ctx: Any, case: Any, kwargs: dict[str, Any]) -> None:
    """A question drawn as valid: a form that is one, and labels distinct that fit (the document says so in words)."""
    body = case.body
    if case.path != _QUESTIONS_PATH or case.meta is None or not isinstance(body, dict):
        return
    if case.meta.generation.mode is not GenerationMode.POSITIVE:
        return
    if isinstance(body.get("schema"), dict):
        body["schema"] = _A_FORM
    options = body.get("options")
    if isinstance(options, list):
        labels = [str(option if isinstance(option, str) else option.get("label")) for option in options]
        too_long_shown = any(len(reveal(label)) > MAX_LABEL for label in labels)
        if len(set(labels)) != len(labels) or too_long_shown:
            body["options"] = [f"option {index}" for index in range(len(options))]
