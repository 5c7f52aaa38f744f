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

A cluster that no node of answers fails like one server that does not: with a ``redis.ConnectionError``
(``ClusterUnreachable``, redis-py's error chained as its cause), which every caller handles already. redis-py raises
its ``RedisClusterUnreachableError`` (or ``SlotNotCoveredError``), no ``RedisError``: a click was answered as a bug,
``/readyz`` and ``/metrics`` with a 500, and the worker's heartbeat thread died. A refresh of the cluster's layout
that an error asked for is waited for within the retry time too (``BotNodesManager``): redis-py asks each node in turn,
a whole timeout each while they answer nothing (3 s on 3 paused masters, before every command).
"""

import logging
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final

from redis.cluster import ClusterPipeline, NodesManager, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisClusterUnreachableError, RedisError, SlotNotCoveredError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.observe import metrics
from bot.store import failed_attempts
from state.text import as_text

logger = logging.getLogger(__name__)

_OPTIONS_FROM: Final = {"XREADGROUP": 4, "XREAD": 1}
"""Where each stream read's options begin (``XREADGROUP GROUP <group> <consumer>`` comes first)."""


class FinalTimeout(RedisTimeoutError):
    """An attempt that timed out with no time left for another: redis-py retries only its own exact error types."""


FinalTimeout.__name__ = "TimeoutError"  # what readiness, metrics and messages name: a timeout like any other


class ClusterUnreachable(RedisConnectionError):
    """No node of the cluster answered a refresh of its layout, or no node serves a command's slot (the cause)."""


ClusterUnreachable.__name__ = "ConnectionError"  # what readiness, metrics and messages name: a lost connection

_UNREACHABLE: Final = (RedisClusterUnreachableError, SlotNotCoveredError)
"""What redis-py's cluster client raises, outside ``RedisError``, when it cannot reach the node a command needs."""


@contextmanager
def reaching() -> Iterator[None]:
    """Raise redis-py's errors of a cluster it cannot reach as ``ClusterUnreachable``, theirs chained as the cause."""
    try:
        yield
    except _UNREACHABLE as error:
        raise ClusterUnreachable(*error.args) from error


_call_started = threading.local()
"""When the call this thread runs on a cluster client began (its retry budget counts from then)."""


def _start_call() -> None:
    """The retry budget of the call this thread starts now begins."""
    _call_started.at = time.monotonic()


def _time_left(retry: Any, *, keep_s: float = 0.0) -> float | None:
    """What is left of this thread's call's retry budget, less ``keep_s`` (``None``: not bounded by time)."""
    budget_s = getattr(retry, "budget_s", None)
    started = getattr(_call_started, "at", None)
    if budget_s is None or started is None:
        return None
    return float(started + budget_s - keep_s - time.monotonic())


class _BoundedAttempts:
    """A call's attempts on a cluster (a command's, or a pipeline's), bounded by the retry budget.

    After a timeout no attempt starts unless it could end within ``retry.budget_s`` (``REDIS_RETRY_SECONDS``),
    each taking ``retry.timeout_s`` at most; every failed attempt is counted.
    """

    retry: Any

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
        timeout_s = getattr(self.retry, "timeout_s", None)
        left_s = None if timeout_s is None else _time_left(self.retry, keep_s=timeout_s)
        return left_s is not None and left_s < 0


class BotRedisCluster(_BoundedAttempts, RedisCluster):
    """redis-py's cluster client; a stream read it sends is routed by its own arguments, never by asking a node.

    A command retries a lost connection for at most ``retry.budget_s`` (``REDIS_RETRY_SECONDS``), as on one server:
    redis-py's cluster retries by count alone, so a paused master cost every attempt's timeout (6.5 s by default).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """redis-py's, its layout read from the cluster now (``ClusterUnreachable`` when no node answers)."""
        with reaching():
            super().__init__(*args, **kwargs)
        # redis-py builds it (its many arguments stay its own); the subclass adds methods only.
        self.nodes_manager.__class__ = BotNodesManager

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        """redis-py's, its attempts bounded by time (see ``_execute_command``)."""
        _start_call()
        with reaching():
            return super().execute_command(*args, **kwargs)  # type: ignore[no-untyped-call]

    def get_node_from_key(self, key: Any, replica: bool = False) -> Any:
        """redis-py's (``ClusterUnreachable`` when no node serves the key's slot)."""
        with reaching():
            return super().get_node_from_key(key, replica)  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        """redis-py's pipeline: a ``BotClusterPipeline``, or in a transaction a ``BotClusterTransaction``."""
        pipeline = super().pipeline(transaction, shard_hint)  # type: ignore[no-untyped-call]
        # redis-py builds it (its many arguments stay its own); the subclasses add methods only, no state.
        pipeline.__class__ = BotClusterTransaction if transaction else BotClusterPipeline
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
        _start_call()
        with reaching():
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


class BotClusterTransaction(ClusterPipeline):
    """redis-py's transaction (it retries with the client's bounded ``Retry``), failing as a lost connection too."""

    def execute(self, raise_on_error: bool = True) -> Any:
        """redis-py's; a refresh of the layout it runs is waited for within the retry time (``BotNodesManager``)."""
        _start_call()
        with reaching():
            return super().execute(raise_on_error)


class BotNodesManager(NodesManager):
    """redis-py's map of the cluster, whose refresh after an error is waited for within the calling call's retry time.

    The refresh runs on a thread of its own, waited for while the call could still make an attempt after it. redis-py
    runs it in the caller's attempt, asking the nodes one by one: every node paused cost a whole timeout each,
    before every call (4 s for ``/readyz`` on 3 paused masters). Not waited for to its end, it goes on by itself; the
    call makes its attempt on the layout it has (a healthy node still answers it). A refresh whose first node answers
    ends in a millisecond or so, as before: a failover is followed as soon. After a refresh that reached no node the
    next is not waited for at all: while the whole cluster is silent a call costs one attempt, as on one server.
    """

    _refresh: threading.Thread | None = None
    _refresh_lock: Final = threading.Lock()

    def _run_requested_refresh(self, retry: Any = None) -> None:
        """redis-py's, on the refresh thread; this thread waits for it until one attempt's time is left of its call."""
        if not self._refresh_requested or not self._refresh_due(retry):
            return
        with self._refresh_lock:
            refresh = self._refresh
            if refresh is None or not refresh.is_alive():
                refresh = self._refresh = threading.Thread(
                    target=self._refresh_layout, args=(retry,), name="cluster-layout", daemon=True
                )
                refresh.start()
        if self._last_refresh_unreachable_args is not None:
            return  # the last one reached no node: this one is left to go on by itself, the call to its attempt
        left_s = _time_left(retry, keep_s=getattr(retry, "timeout_s", 0.0))
        refresh.join(None if left_s is None else max(left_s, 0.0))

    def _refresh_layout(self, retry: Any) -> None:
        try:
            super()._run_requested_refresh(retry)  # logs a refresh that reached no node, and asks for another
        except Exception:  # boundary: a thread of its own, whose error no caller would see
            logger.exception("the refresh of the cluster's layout failed")


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
