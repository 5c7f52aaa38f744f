"""How long a blocking Redis read (``XREADGROUP BLOCK``, ``BLPOP``) may wait.

Every client gives up on a reply after ``REDIS_TIMEOUT_SECONDS`` (at least 1 s), so that a server that stops
answering costs a bounded wait. A blocking read asks the server to hold its reply: it must ask for less than
that, or every idle read would look like a lost server.
"""

from typing import Final

BLOCKING_WAIT_MAX_S: Final = 0.5
"""The longest wait a blocking read asks of the server (the readers loop: a shorter wait costs one more command)."""


def bounded_wait_s(wanted_s: float) -> float:
    """``wanted_s``, at most ``BLOCKING_WAIT_MAX_S``."""
    return min(wanted_s, BLOCKING_WAIT_MAX_S)
