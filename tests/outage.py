"""Redis stopped for one step: the same server, shut down cleanly and started again on its port with its data."""

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
