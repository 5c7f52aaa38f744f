"""Failures queued per Web API method: an HTTP status, an ``ok: false`` error, or a slow answer.

The status is a 429 (with ``Retry-After``) or a 5xx. Each fault answers the next ``times`` calls of its method, in
the order they were queued.
"""

from dataclasses import dataclass
from typing import Literal

FaultKind = Literal["status", "error", "slow"]


@dataclass
class Fault:
    """One queued failure; ``times`` counts the calls it still answers."""

    kind: FaultKind
    times: int
    status: int = 200
    retry_after: int | str | None = None
    """A 429's ``Retry-After`` header: seconds, or any text (what a broken proxy might send)."""
    error: str = ""
    seconds: float = 0.0
    channel: str | None = None
    """Only calls for this channel (any call when ``None``)."""


class FaultQueue:
    """The faults waiting per method (not thread-safe: the fake calls it with its lock held)."""

    def __init__(self) -> None:
        """Start with no faults queued."""
        self._queued: dict[str, list[Fault]] = {}

    def add(self, method: str, fault: Fault) -> None:
        """Queue ``fault`` for the next calls of ``method``, after those queued before it."""
        if fault.times < 1:
            raise ValueError("times must be at least 1")
        self._queued.setdefault(method, []).append(fault)

    def take(self, method: str, channel: object = None) -> Fault | None:
        """The fault answering this call of ``method`` (for ``channel``), if any (using up one of its times)."""
        queue = self._queued.get(method) or []
        fault = next((fault for fault in queue if fault.channel in (None, channel)), None)
        if fault is None:
            return None
        fault.times -= 1
        if fault.times == 0:
            queue.remove(fault)
        return fault
