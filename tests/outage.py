"""Redis stopped for one step: the same server, shut down cleanly and started again on its port with its data."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from state import RedisServer


@contextmanager
def redis_stopped(server: RedisServer) -> Iterator[None]:
    """Redis is down inside the block (connections refused) and back, with its data, after it."""
    server.stop()
    try:
        yield
    finally:
        server.start()


class TimedOutage:
    """Redis stopped at a chosen point (``begin()``, e.g. from a hook) and back ``pause_s`` later, from a timer.

    The code under test keeps running meanwhile, as it would in production; ``settle()`` waits for
    the restart so no server outlives the test.
    """

    def __init__(self, server: RedisServer, pause_s: float) -> None:
        """Nothing stops until ``begin()``."""
        self.server = server
        self.pause_s = pause_s
        self.restarted = threading.Event()
        self._timer: threading.Timer | None = None

    def begin(self) -> None:
        """Stop the server now; it starts again (same port, same data) ``pause_s`` from now."""
        self.server.stop()
        self._timer = threading.Timer(self.pause_s, self._restart)
        self._timer.start()

    def settle(self) -> None:
        """Wait until the restart happened (if an outage began)."""
        if self._timer is not None:
            self._timer.join(30)

    def _restart(self) -> None:
        self.server.start()
        self.restarted.set()
