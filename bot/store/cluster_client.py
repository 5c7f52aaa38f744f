"""The bot's Redis Cluster client: redis-py's, routing a stream read by the keys it names.

redis-py finds the keys of a command whose keys move (``XREADGROUP``, ``XREAD``: they follow ``STREAMS``) by asking
its default node, one master, with ``COMMAND GETKEYS`` before each such command. With that master paused or dead,
every shard's stream reads waited the client's timeout and failed: a worker then left every shard alone a moment
(``bot.store.queues.shard_trouble``), and the healthy shards' jobs waited seconds. The keys are read from the arguments
here instead: no extra round trip, and a master's trouble stays its own shard's. This covers commands sent by the
client itself; a pipeline made from it routes its commands with redis-py's own code (the bot pipelines no stream read).

Every failed attempt of a command is counted on its thread (``bot.store.failed_attempts``): the cluster client retries
an attempt that lost its connection, whose reply may be lost (a stream read's entries then handed to nobody). It is
counted in ``signoff_redis_errors_total`` too, as on one server.

A pipeline outside a transaction (``BotClusterPipeline``) is bounded by the same retry time: redis-py sends it in one
round trip, sends each command that failed again on its own with the client's retries, then the whole pipeline again
(by count: the worker's three-command heartbeat on a paused master took 26 s). A transaction retries with the
client's own ``Retry``, bounded already (``bot.services.redis_retry``).
"""

import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, Final

from redis.cluster import ClusterPipeline, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.observe import metrics
from bot.store import failed_attempts
from state.text import as_text

_OPTIONS_FROM: Final = {"XREADGROUP": 4, "XREAD": 1}
"""Where each stream read's options begin (``XREADGROUP GROUP <group> <consumer>`` comes first)."""


class FinalTimeout(RedisTimeoutError):
    """An attempt that timed out with no time left for another: redis-py retries only its own exact error types."""


FinalTimeout.__name__ = "TimeoutError"  # what readiness, metrics and messages name: a timeout like any other


class _BoundedAttempts:
    """A call's attempts on a cluster (a command's, or a pipeline's), bounded by the retry budget.

    After a timeout no attempt starts unless it could end within ``retry.budget_s`` (``REDIS_RETRY_SECONDS``),
    each taking ``retry.timeout_s`` at most; every failed attempt is counted.
    """

    retry: Any
    _call_started = threading.local()

    def _start_call(self) -> None:
        """The retry budget of the call this thread starts now begins."""
        self._call_started.at = time.monotonic()

    def _execute_command(self, target_node: Any, *args: Any, **kwargs: Any) -> Any:
        """One attempt of a command on ``target_node`` (redis-py's), a failed one counted."""
        try:
            return super()._execute_command(target_node, *args, **kwargs)  # type: ignore[misc]
        except (RedisTimeoutError, TimeoutError) as error:
            _count_failed(error)
            self._give_up_without_time(error)
            raise
        except RedisConnectionError as error:
            _count_failed(error)
            raise

    def _give_up_without_time(self, error: BaseException | None) -> None:
        """Raise ``error``, a timeout, as final when another attempt, timing out too, would end past the budget."""
        if not isinstance(error, RedisTimeoutError | TimeoutError) or not self._no_time_for_another():
            return
        if isinstance(error, FinalTimeout):
            raise error
        raise FinalTimeout(*error.args) from error

    def _no_time_for_another(self) -> bool:
        """Whether another attempt, timing out too, would end past the retry budget (as ``bot.services`` bounds one)."""
        budget_s, timeout_s = getattr(self.retry, "budget_s", None), getattr(self.retry, "timeout_s", None)
        started = getattr(self._call_started, "at", None)
        if budget_s is None or timeout_s is None or started is None:
            return False
        return bool(time.monotonic() - started + timeout_s > budget_s)


class BotRedisCluster(_BoundedAttempts, RedisCluster):
    """redis-py's cluster client; a stream read it sends is routed by its own arguments, never by asking a node.

    A command retries a lost connection for at most ``retry.budget_s`` (``REDIS_RETRY_SECONDS``), as on one server:
    redis-py's cluster retries by count alone, so a paused master cost every attempt's timeout (6.5 s by default).
    """

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """redis-py's, its attempts bounded by time (see ``_execute_command``)."""
        self._start_call()
        return super().execute_command(*args, **kwargs)  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        """redis-py's pipeline; outside a transaction, a ``BotClusterPipeline``."""
        pipeline = super().pipeline(transaction, shard_hint)  # type: ignore[no-untyped-call]
        if not transaction:
            # redis-py builds it (its many arguments stay its own); the subclass adds methods only, no state.
            pipeline.__class__ = BotClusterPipeline
        return pipeline

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


class BotClusterPipeline(_BoundedAttempts, ClusterPipeline):
    """redis-py's pipeline outside a transaction, all its attempts within one retry budget, as one command's.

    Its round trip is every command's first attempt; a command it failed is sent again on its own
    (``_internal_execute_command``), and the whole pipeline again while one still fails (``_retry_backoff_delay``).
    """

    def execute(self, raise_on_error: bool = True) -> Any:
        """redis-py's; the retry budget covers the round trip and every attempt after it."""
        self._start_call()
        return super().execute(raise_on_error)

    def _internal_execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """A command the round trip failed, sent again on its own (redis-py's), unless that attempt timed out too late.

        redis-py passes the command's arguments only: its first attempt's error is found on the queue by them (equal
        commands went to one node in the round trip and failed alike).
        """
        failure = next(
            (
                command.result
                for command in self._execution_strategy.command_queue
                if command.args == args and isinstance(command.result, Exception)
            ),
            None,
        )
        if isinstance(failure, RedisTimeoutError | RedisConnectionError):
            _count_failed(failure)  # the command was sent: its reply may be lost
            try:
                self._give_up_without_time(failure)
            except FinalTimeout:
                self._ask_last(args)
                raise
        return super()._internal_execute_command(*args, **kwargs)  # type: ignore[no-untyped-call]

    def _ask_last(self, args: tuple[Any, ...]) -> None:
        """Have the next topology refresh ask the node of the command ``args`` last, as after a command's attempt.

        redis-py's attempt of a command on its own does so; the pipeline's round trip does not, so a refresh that
        asked the silent node first cost the next call of the client another timeout.
        A command without a key (its node is not found by its arguments) is left to the next refresh as it is.
        """
        try:
            slot = self.determine_slot(*args)
            node = None if slot is None else self.nodes_manager.get_node_from_slot(slot)
        except (RedisClusterException, RedisError):
            # A hint only: the caller is owed the timeout, not a "missing key", an uncovered slot or a failed lookup.
            return
        if node is None:
            return
        self.nodes_manager.move_node_to_end_of_cached_nodes(node.name)
        self.nodes_manager._request_refresh(last_failed_node_name=node.name)

    def _retry_backoff_delay(self, retry: Any, failures: int) -> float:  # type: ignore[override]
        """The pause before another attempt of the pipeline or of a command sent again (redis-py's).

        None follows a timeout that leaves no time for it: redis-py asks while it handles the failed attempt's error.
        """
        self._give_up_without_time(sys.exception())
        return float(super()._retry_backoff_delay(retry, failures))


def _count_failed(error: BaseException) -> None:
    """One failed attempt: on its thread, for a reader's lost replies, and in ``signoff_redis_errors_total``.

    The cluster's nodes retry nothing (redis-py's cluster retries above them), so the bot's counting ``Retry``
    (``bot.services.redis_retry``) never sees a cluster's failed attempt.
    """
    failed_attempts.count()
    metrics.redis_failed(error)


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
