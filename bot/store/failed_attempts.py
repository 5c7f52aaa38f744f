"""How many Redis command attempts failed on this thread: a retried command's first reply may be lost.

The bot's clients retry a lost connection in place (``bot.services.redis_retry``; the cluster client per attempt,
``bot.store.cluster_client``): a command that returns may have been sent twice, and a read the server ran the first
time handed its entries to a reply nobody got. Readers compare ``here()`` before and after a call to learn that.
"""

import threading

_counts = threading.local()


def count() -> None:
    """One attempt of a command failed on this thread (its connection dropped or timed out)."""
    _counts.failed = here() + 1


def here() -> int:
    """How many attempts failed on this thread so far (compare two readings: only the difference means anything)."""
    return int(getattr(_counts, "failed", 0))
