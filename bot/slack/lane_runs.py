"""The threads a dispatcher delivers lanes on: a lane stuck on its Redis master holds back its conversation only.

A batch's lanes run at once, and the dispatcher waits for them to leave their lanes in one round trip, but no longer
than ``LANE_WAIT_S``: a lane whose master stopped answering (paused, failing over) takes the client's retries, seconds,
and the next batch (other conversations, on healthy masters) would wait behind it. A lane still running then finishes
on its own and leaves its lane itself; the next batch starts as soon as a thread is free.
"""

import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Final, TypeVar

LANE_WAIT_S: Final = 0.2
"""How long a batch waits for its lanes before the slow ones finish on their own (a Slack call takes ~0.1 s)."""

T = TypeVar("T")


class LaneRuns:
    """Runs lanes on ``size`` threads (made on first use); remembers those still running from earlier batches."""

    def __init__(self, size: int) -> None:
        """``size``: how many lanes run at once."""
        self._size = size
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._running_late: set[Future[Any]] = set()

    def run(
        self, lanes: Sequence[Callable[[], T]], *, finish_late: Callable[[int, "Future[T]"], None]
    ) -> dict[int, T | BaseException]:
        """Run every lane at once; return the outcome (or error) of each that ended within ``LANE_WAIT_S``, by index.

        The others are left running: ``finish_late(index, future)`` is called from the lane's thread when it ends.
        First waits for a free thread when lanes of earlier batches hold them all.
        """
        pool = self._threads()
        self._wait_for_room()
        futures = [pool.submit(lane) for lane in lanes]
        wait(futures, timeout=LANE_WAIT_S)
        ended: dict[int, T | BaseException] = {}
        for index, future in enumerate(futures):
            if future.done():
                error = future.exception()
                ended[index] = error if error is not None else future.result()
                continue
            with self._lock:
                self._running_late.add(future)
            future.add_done_callback(functools.partial(self._ended_late, index, finish_late))
        return ended

    def close(self) -> None:
        """Stop the threads once the lanes running end."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _threads(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._size, thread_name_prefix="outbox-lane")
            return self._pool

    def _wait_for_room(self) -> None:
        with self._lock:
            late = set(self._running_late)
        if len(late) >= self._size:
            wait(late, return_when=FIRST_COMPLETED)

    def _ended_late(self, index: int, finish_late: Callable[[int, "Future[T]"], None], done: "Future[T]") -> None:
        with self._lock:
            self._running_late.discard(done)
        finish_late(index, done)
