"""How many long-polls (``GET /v1/approvals/{id}?wait=...``) one web process holds at once.

A long-poll holds a server thread for up to a minute, and ``/slack/events`` shares those threads: Slack
needs its answer within 3 s. The slots bound the threads waits may take (``API_MAX_WAITS``); a wait
over the bound is refused at once (429, ask again later), never queued behind the others.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class WaitSlots:
    """A non-blocking semaphore of ``limit`` slots, one per long-poll that holds a thread."""

    def __init__(self, limit: int) -> None:
        """Allow ``limit`` (at least 1) long-polls at once."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)  # bounded: a slot released twice is a bug, and raises
        self._count = threading.Lock()
        self._in_use = 0

    @property
    def in_use(self) -> int:
        """How many long-polls hold a slot now."""
        with self._count:
            return self._in_use

    @contextmanager
    def held(self) -> Iterator[bool]:
        """A slot for the block if one is free (``True``), else ``False`` at once; released however the block ends.

        The slot goes back in ``finally``: a wait that raised, or whose client hung up (the server only
        notices when it writes the answer), frees its slot when the wait ends.
        """
        acquired = self._slots.acquire(blocking=False)
        if acquired:
            with self._count:
                self._in_use += 1
        try:
            yield acquired
        finally:
            if acquired:
                with self._count:
                    self._in_use -= 1
                self._slots.release()
