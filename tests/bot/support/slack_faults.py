"""Failures the tests make the loopback Slack answer with: an HTTP 429 or 5xx, an ``ok: false`` error, a slow answer,
every call failing for a while (``answering``), or no answer at all (``refusing``: connections refused, as while
Slack is unreachable).

``FaultySlack`` is ``loopback_slack.LoopbackSlack`` whose ``around_method`` (the loopback's extension point around
every method's answer) answers from the faults queued per method first. Each fault answers the next ``times`` calls of
its method, in the order they were queued.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from loopback_slack import Answer, JsonDict, LoopbackSlack

__all__ = ["FaultySlack"]


@dataclass
class _Fault:
    """One queued failure; ``times`` counts the calls it still answers."""

    times: int
    instead: Answer | None  # answered instead of the method's (which then has no effect); None: the method's, late
    delay: float = 0.0
    channel: str | None = None  # only calls for this channel (any call when None)


class FaultySlack(LoopbackSlack):
    """``LoopbackSlack`` that answers the next calls of a method with a failure: ``fail_next``, ``error_next``,
    ``slow_next``."""

    _faults: dict[str, list[_Fault]] | None = None  # method -> its faults, oldest first (under ``lock``)
    _always: Answer | None = None  # every call's answer while ``answering`` (under ``lock``)

    def fail_next(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: int | str | None = 1,
        times: int = 1,
        channel: str | None = None,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` (for ``channel``, if given) with HTTP ``status``.

        No state changes. A 429 carries ``Retry-After: retry_after`` (Slack sends an integer; text stands for
        what a broken proxy might send) unless it is ``None``.
        """
        error = "ratelimited" if status == 429 else "fatal_error"
        headers = {"Retry-After": str(retry_after)} if status == 429 and retry_after is not None else {}
        self._queue(method, _Fault(times, Answer(status, {"ok": False, "error": error}, headers), channel=channel))

    def error_next(self, method: str, error: str, *, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with HTTP 200 ``{"ok": false, "error": error}``."""
        self._queue(method, _Fault(times, Answer(200, {"ok": False, "error": error})))

    def slow_next(self, method: str, seconds: float, *, times: int = 1) -> None:
        """Delay the answer to the next ``times`` calls of ``method``.

        The call is processed (and recorded) on arrival; only the response is late, as when Slack did the work but
        the client timed out waiting.
        """
        self._queue(method, _Fault(times, None, delay=seconds))

    @contextmanager
    def answering(self, status: int, *, retry_after: int | None = None) -> Iterator[None]:
        """Answer every Web API call with HTTP ``status`` inside the block (a 429 with ``Retry-After``, if given)."""
        error = "ratelimited" if status == 429 else "fatal_error"
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        with self.lock:
            self._always = Answer(status, {"ok": False, "error": error}, headers)
        try:
            yield
        finally:
            with self.lock:
                self._always = None

    def _queue(self, method: str, fault: _Fault) -> None:
        if fault.times < 1:
            raise ValueError("times must be at least 1")
        with self.lock:
            if self._faults is None:
                self._faults = {}
            self._faults.setdefault(method, []).append(fault)

    def around_method(self, method: str, args: JsonDict, answer: Callable[[], Answer]) -> Answer:
        """The first fault queued for this call of ``method`` (using up one of its times), else the method's answer."""
        if self._always is not None:
            return self._always
        queued = (self._faults or {}).get(method) or []
        fault = next((fault for fault in queued if fault.channel in (None, args.get("channel"))), None)
        if fault is None:
            return answer()
        fault.times -= 1
        if fault.times == 0:
            queued.remove(fault)
        return fault.instead if fault.instead is not None else replace(answer(), delay=fault.delay)
