"""Agent-supplied values are bounded before they are stored: depth, size, and plain JSON only."""

import json
from datetime import UTC, datetime
from typing import Any

from bot.domain.records import ApprovalRequest
from bot.domain.storable_json import MAX_CHARS, NESTED_TOO_DEEPLY, bounded_json, more_not_shown, truncation_marker
from tests.bot.support.agents import nested
from tests.bot.support.approval_requests import an_approval_request


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    return 0


def test_ordinary_values_are_kept_as_they_are() -> None:
    value = {"service": "checkout", "replicas": 3, "ratio": 0.5, "dry_run": False, "tags": ["a", None]}
    assert bounded_json(value) == value


def test_deep_values_are_cut_with_a_marker_and_stay_readable_as_a_record() -> None:
    shown = bounded_json({"payload": nested(100_000 // 100)}, max_depth=24)
    assert _depth(shown) == 24
    assert NESTED_TOO_DEEPLY in json.dumps(shown, ensure_ascii=False)
    request = an_approval_request(tool="act", tool_input=shown, reason={"tool": "act", "input": shown})
    assert ApprovalRequest.model_validate_json(request.model_dump_json()) == request


def test_long_and_numerous_values_are_cut_to_the_budget_with_markers() -> None:
    long_text = bounded_json({"text": "x" * 100_000, "next": 1})
    assert len(json.dumps(long_text)) < MAX_CHARS + 200
    assert long_text["text"].endswith(truncation_marker(100_000 - MAX_CHARS + 4))
    assert long_text["…"] == more_not_shown(1)
    many = bounded_json(list(range(100_000)))
    assert len(json.dumps(many)) < MAX_CHARS * 2
    assert many[-1].endswith("more entries not shown)")


def test_values_that_are_not_json_become_text() -> None:
    shown = bounded_json({1: {3}, "at": datetime(2026, 1, 1, tzinfo=UTC), "nan": float("nan"), "big": 1 << 4000})
    assert shown["1"] == [3]
    assert shown["at"].startswith("2026-01-01")
    assert shown["nan"] == "nan"
    assert shown["big"].startswith("0x")
    json.dumps(shown, allow_nan=False)
    assert bounded_json(shown) == shown
