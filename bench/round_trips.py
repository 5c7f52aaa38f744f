"""Count Redis round trips for real: every write of a request (a command, or a whole pipeline) to the server.

A client from ``counting_client`` shares one counter among all its connections; read ``count``
before and after the code being measured.
"""

from typing import Any

import redis


class RoundTrips:
    """How many times the client sent something to the server and waited for the answer."""

    def __init__(self) -> None:
        """Start at zero."""
        self.count = 0


def counting_client(url: str) -> tuple[redis.Redis, RoundTrips]:
    """A client for ``url`` whose round trips are counted (a pipeline is one, as it is one write and one wait)."""
    trips = RoundTrips()

    class _Counting(redis.Connection):
        def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            trips.count += 1
            super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]

    pool = redis.ConnectionPool.from_url(url, connection_class=_Counting)
    return redis.Redis(connection_pool=pool), trips
