"""The bot's Redis Cluster client: redis-py's, routing a stream read by the keys it names.

redis-py finds the keys of a command whose keys move (``XREADGROUP``, ``XREAD``: they follow ``STREAMS``) by asking
its default node, one master, with ``COMMAND GETKEYS`` before each such command. With that master paused or dead,
every shard's stream reads waited the client's timeout and failed: a worker then left every shard alone a moment
(``bot.store.queues.shard_trouble``), and the healthy shards' jobs waited seconds. The keys are read from the arguments
here instead: no extra round trip, and a master's trouble stays its own shard's. This covers commands sent by the
client itself; a pipeline made from it routes its commands with redis-py's own code (the bot pipelines no stream read).

Every failed attempt of a command is counted on its thread (``bot.store.failed_attempts``): the cluster client retries
an attempt that lost its connection, whose reply may be lost (a stream read's entries then handed to nobody).
"""

import threading
import time
from collections.abc import Sequence
from typing import Any, Final

from redis.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.store import failed_attempts
from state.text import as_text

_OPTIONS_FROM: Final = {"XREADGROUP": 4, "XREAD": 1}
"""Where each stream read's options begin (``XREADGROUP GROUP <group> <consumer>`` comes first)."""


class FinalTimeout(RedisTimeoutError):
    """An attempt that timed out with no time left for another: redis-py retries only its own exact error types."""


FinalTimeout.__name__ = "TimeoutError"  # what readiness, metrics and messages name: a timeout like any other


class BotRedisCluster(RedisCluster):
    """redis-py's cluster client; a stream read it sends is routed by its own arguments, never by asking a node.

    A command retries a lost connection for at most ``retry.budget_s`` (``REDIS_RETRY_SECONDS``), as on one server:
    redis-py's cluster retries by count alone, so a paused master cost every attempt's timeout (6.5 s by default).
    """

    _command_started = threading.local()

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """redis-py's, its attempts bounded by time (see ``_execute_command``)."""
        self._command_started.at = time.monotonic()
        return super().execute_command(*args, **kwargs)  # type: ignore[no-untyped-call]

    def _execute_command(self, target_node: Any, *args: Any, **kwargs: Any) -> Any:
        """One attempt of a command on ``target_node`` (redis-py's), a failed one counted."""
        try:
            return super()._execute_command(target_node, *args, **kwargs)  # type: ignore[no-untyped-call]
        except (RedisTimeoutError, TimeoutError) as error:
            failed_attempts.count()
            if self._no_time_for_another():
                raise FinalTimeout(*error.args) from error
            raise
        except RedisConnectionError:
            failed_attempts.count()
            raise

    def _no_time_for_another(self) -> bool:
        """Whether another attempt, timing out too, would end past the retry budget (as ``bot.services`` bounds one)."""
        budget_s, timeout_s = getattr(self.retry, "budget_s", None), getattr(self.retry, "timeout_s", None)
        started = getattr(self._command_started, "at", None)
        if budget_s is None or timeout_s is None or started is None:
            return False
        return bool(time.monotonic() - started + timeout_s > budget_s)

    def determine_slot(self, *args: Any) -> int | None:
        """The slot of the command ``args`` (redis-py's answer for all but a stream read)."""
        streams = stream_keys(args)
        if streams is None:
            slot = super().determine_slot(*args)
            return None if slot is None else int(slot)
        slots = {int(self.keyslot(stream)) for stream in streams}  # type: ignore[no-untyped-call]
        if len(slots) != 1:
            raise RedisClusterException(f"{args[0]} - all keys must map to the same key slot")
        return slots.pop()


def stream_keys(args: Sequence[Any]) -> Sequence[Any] | None:
    """The streams an ``XREADGROUP`` or ``XREAD`` names (``None``: another command, or one the server would refuse)."""
    first = _OPTIONS_FROM.get(str(args[0]).upper()) if args else None
    if first is None:
        return None
    for index in range(first, len(args)):
        # Before STREAMS come only options and their numbers (COUNT, BLOCK, NOACK, CLAIM): no name to mistake.
        if isinstance(args[index], str | bytes) and as_text(args[index]).upper() == "STREAMS":
            named = args[index + 1 :]
            if not named or len(named) % 2:
                return None
            return named[: len(named) // 2]
    return None
