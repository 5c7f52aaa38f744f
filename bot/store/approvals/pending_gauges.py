"""The pending approvals' gauges, read from the open-by index's rule entries (``approval_index.policy``).

Publishing adds a request's rule entry in its transaction and every decision (click, reply, expiry, withdrawal,
uninstall) removes it in the decide script's atomic step, so the counts are exact; a scrape asks each shard once
(``PENDING_BY_POLICY``: a bounded read per rule), whatever the number of requests waiting.
"""

from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

import redis

from bot.observe.state_collector import AGE_BUCKETS, PendingTally
from bot.store import keys, scripts
from bot.store.approvals.approval_index import POLICY_PREFIX
from bot.store.pipelined import run_each
from state.text import as_text

_MS_DIGITS = 13


class PendingGauges:
    """Counts the approvals waiting, per rule and age bucket, and finds the oldest."""

    def __init__(self, client: redis.Redis) -> None:
        """Register the script."""
        self._client = client
        self._script = client.register_script(scripts.PENDING_BY_POLICY.text)

    def tally(self, now_s: float) -> PendingTally:
        """What waits now: count per (rule, age bucket) and the oldest request's time (unix s)."""
        now_ms = int(now_s * 1000)
        bounds = [f"{max(now_ms - int(bound * 1000), 0):0{_MS_DIGITS}d}" for bound, _label in AGE_BUCKETS[:-1]]
        pending = scripts.PENDING_BY_POLICY
        calls = [
            (pending.key_list(open_by_key=keys.open_by(shard)), pending.arg_list(*bounds, rules_prefix=POLICY_PREFIX))
            for shard in keys.shards()
        ]
        counts: dict[tuple[str, str], int] = {}
        oldest_ms: int | None = None
        labels = [label for _bound, label in AGE_BUCKETS]
        for answer in run_each(self._client, self._script, calls):
            if isinstance(answer, Exception):
                raise answer
            for name, first_ms, per_bucket in _rules(answer, len(labels)):
                oldest_ms = first_ms if oldest_ms is None else min(oldest_ms, first_ms)
                for label, count in zip(labels, per_bucket, strict=True):
                    if count:
                        counts[(name, label)] = counts.get((name, label), 0) + count
        return PendingTally(counts=counts, oldest_s=None if oldest_ms is None else oldest_ms / 1000)


def _rules(answer: Sequence[Any], buckets: int) -> list[tuple[str, int, list[int]]]:
    """A shard's answer as (rule, its oldest ms, its counts youngest bucket first)."""
    width = 2 + buckets
    rows = []
    for start in range(0, len(answer), width):
        name, first, *counts = answer[start : start + width]
        rows.append((unquote(as_text(name)), int(as_text(first)), [int(count) for count in counts]))
    return rows
