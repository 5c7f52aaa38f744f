"""Count Redis round trips for real: every write of a request (a command, or a whole pipeline) to the server.

A client from ``counting_client`` shares one counter among all its connections; read ``count``
before and after the code being measured. ``commands_sent`` sees every client, other processes' too:
the commands sent to one server during a block (Redis MONITOR).
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

_MARK = "signoff-commands-sent-"


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


@contextmanager
def commands_sent(client: redis.Redis) -> Iterator[list[str]]:
    """The commands every client sends to ``client``'s server during the block (filled once it ends), but the
    ones scripts run inside Redis: with no pipelining, one per round trip. MONITOR watches one server only."""
    commands: list[str] = []
    ready, done = threading.Event(), threading.Event()

    def watch() -> None:
        started = False
        with client.monitor() as monitor:  # type: ignore[no-untyped-call]
            ready.set()
            for command in monitor.listen():
                text = str(command.get("command", ""))
                if text == f"ECHO {_MARK}start":
                    started = True
                elif text == f"ECHO {_MARK}end":
                    done.set()
                    return
                elif started and command.get("client_type") != "lua":
                    commands.append(text)

    threading.Thread(target=watch, daemon=True).start()
    if not ready.wait(10):
        raise RuntimeError("MONITOR did not start")
    time.sleep(0.2)  # the monitor is subscribed once its first reply came: give it a moment to be sure
    client.echo(f"{_MARK}start")
    yield commands
    client.echo(f"{_MARK}end")
    if not done.wait(30):
        raise RuntimeError("MONITOR did not see the end of the block")
