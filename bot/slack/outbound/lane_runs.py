"""The threads a dispatcher delivers lanes on: a lane stuck on its Redis master holds back its conversation only.

A batch's lanes run at once, and the dispatcher waits for them to leave their lanes in one round trip; but once one
lane ended, the others get ``LANE_WAIT_S`` more. A lane whose master stopped answering (paused, failing over) takes
the client's retries, seconds, and the next batch (other conversations, on healthy masters) would wait behind it. A
lane still running then finishes on its own and leaves its lane itself, holding its thread meanwhile; the next batch
starts at once (its lanes take the threads left). A batch of one lane is waited for, as the lanes left running are by
``settle``, until they left their lanes too.
"""

import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Final, TypeVar

LANE_WAIT_S: Final = 0.2
"""Once one lane of a batch ended, how long the batch waits for the others (a Slack call takes ~0.1 s)."""

T = TypeVar("T")


class LaneRuns:
    """Runs lanes on ``size`` threads (made on first use); remembers those still running from earlier batches."""

    def __init__(self, size: int) -> None:
        """``size``: how many lanes run at once."""
        self._size = size
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._left = threading.Condition(self._lock)  # a late lane left its lane (its ``finish_late`` returned)
        self._running_late: set[Future[Any]] = set()

    def run(
        self, lanes: Sequence[Callable[[], T]], *, finish_late: Callable[[int, "Future[T]"], None]
    ) -> dict[int, T | BaseException]:
        """Run every lane at once; return the outcome (or error) of each that ended in time, by index.

        Once one lane ended, the others get ``LANE_WAIT_S`` more; those still running then are left to end on their
        own: ``finish_late(index, future)`` is called from the lane's thread when it does.
        """
        pool = self._threads()
        futures = [pool.submit(lane) for lane in lanes]
        _, running = wait(futures, return_when=FIRST_COMPLETED)
        wait(running, timeout=LANE_WAIT_S)
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

    def settle(self) -> bool:
        """Wait until the lanes left running by earlier batches ended and left their lanes; whether there were any."""
        with self._left:
            late = set(self._running_late)
            self._left.wait_for(lambda: not late & self._running_late)
        return bool(late)

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

    def _ended_late(self, index: int, finish_late: Callable[[int, "Future[T]"], None], done: "Future[T]") -> None:
        try:
            finish_late(index, done)
        finally:
            with self._left:
                self._running_late.discard(done)
                self._left.notify_all()
