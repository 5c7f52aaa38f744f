"""The metrics of what waits in Redis, read when Prometheus scrapes (aggregate them with ``max``, not ``sum``).

Every process reads the same keys, so every process reports the same numbers.

``signoff_pending_approvals{policy, age}``: approvals waiting, by their policy's name and how long they have
waited (``AGE_BUCKETS``); ``signoff_oldest_pending_approval_seconds``; ``signoff_outbox_depth`` (Slack calls owed)
and ``signoff_outbox_dead_entries`` (parked as undeliverable); ``signoff_state_scrape_ok`` (0 when Redis could
not be read: the other families are then absent rather than wrong).
"""

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

import redis
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

logger = logging.getLogger(__name__)

AGE_BUCKETS: Final = ((300, "lt_5m"), (3600, "5m_1h"), (86_400, "1h_1d"), (float("inf"), "gt_1d"))
"""(upper bound in seconds, label): the ``age`` label of a pending approval."""
_SCRAPE_OK: Final = "signoff_state_scrape_ok"
_SCRAPE_OK_HELP: Final = "1 when the state in Redis could be read; 0 when not, and the other gauges are then absent."


@dataclass(frozen=True)
class PendingTally:
    """What waits, as a scrape reads it: counts per (policy, age bucket), and the oldest request's time (unix s)."""

    counts: Mapping[tuple[str, str], int]
    oldest_s: float | None


def age_bucket(waited_s: float) -> str:
    """The ``age`` label for an approval that has waited ``waited_s``."""
    return next(label for bound, label in AGE_BUCKETS if waited_s < bound)


class StateCollector(Collector):
    """Reads the pending approvals and the outbox at each scrape (through the stores' own readers).

    ``pending`` is kept as records change (``bot.store.approvals.pending_gauges``): a scrape costs the same however
    many wait.
    """

    def __init__(
        self,
        *,
        pending: Callable[[float], PendingTally],
        outbox_depth: Callable[[], int],
        outbox_dead: Callable[[], int],
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``pending``: what waits at a time (unix s)."""
        self._pending = pending
        self._outbox_depth = outbox_depth
        self._outbox_dead = outbox_dead
        self._clock = clock

    def collect(self) -> Iterator[Metric]:
        """The families above, or only ``signoff_state_scrape_ok 0`` when Redis cannot be read."""
        try:
            now = self._clock()
            pending = self._pending(now)
            depth, dead = self._outbox_depth(), self._outbox_dead()
        except redis.RedisError as error:  # a scrape must answer: a broken read is a 0 here, and a line in the log
            logger.warning("metrics: cannot read the state in Redis: %s", error)
            yield GaugeMetricFamily(_SCRAPE_OK, _SCRAPE_OK_HELP, value=0)
            return
        family = GaugeMetricFamily(
            "signoff_pending_approvals",
            f"Approvals waiting for a decision, by policy and age ({', '.join(label for _, label in AGE_BUCKETS)}).",
            labels=["policy", "age"],
        )
        for (policy, age), count in sorted(pending.counts.items()):
            family.add_metric([policy, age], count)
        yield family
        oldest = 0.0 if pending.oldest_s is None else max(now - pending.oldest_s, 0.0)
        yield GaugeMetricFamily(
            "signoff_oldest_pending_approval_seconds", "How long the oldest pending approval has waited.", value=oldest
        )
        yield GaugeMetricFamily("signoff_outbox_depth", "Slack calls waiting in the outbox.", value=depth)
        yield GaugeMetricFamily(
            "signoff_outbox_dead_entries", "Outbox entries parked as undeliverable (dead letters).", value=dead
        )
        yield GaugeMetricFamily(_SCRAPE_OK, _SCRAPE_OK_HELP, value=1)
