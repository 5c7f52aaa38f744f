"""A Lua script sent straight over a connection of its own: a click's one round trip without the pool's work.

redis-py's pooled path (take a connection under the pool's lock, retry and event bookkeeping, give it
back) costs about as much as the round trip itself on loopback: measured 84 us per ``EVALSHA``, against
42 us sent and read on a connection held apart (``bench.ack``'s concern: a click's answer waits for it).
So a ``DirectScript`` keeps its own idle connections (per node on a Redis Cluster: the node that holds
the first key's slot), takes one per call and puts it back; threads come and go, connections stay.

A reply that does not come within the clients' timeout (``REDIS_TIMEOUT_SECONDS``) is not waited for twice: the
call fails at once. Anything else unusual goes to the ordinary pooled call, which knows how to handle it: a
connection that broke (it retries in place, as every command does: ``REDIS_RETRY_SECONDS``), a slot that moved or a
cluster that is failing over (it follows the cluster's new layout). With replicas to wait for, that call is a
pipeline of the script and its ``WAIT`` on one pooled connection of the key's node (``WAIT`` counts only its own
connection's writes); on a cluster whose layout changed, the layout is read again and the pair sent once more. A
script the server does not know yet (a restart flushed its cache) is loaded on the connection and sent again.
"""

import logging
from collections import deque
from collections.abc import Sequence
from typing import Any, Final, Protocol, cast

import hiredis
import redis
from redis.cluster import RedisCluster
from redis.exceptions import AskError, ClusterDownError, MovedError, NoScriptError, TryAgainError

from bot.observe import metrics
from bot.store.cluster_client import reaching

logger = logging.getLogger(__name__)

# Replies that mean "ask the cluster where this slot lives now": the pooled call follows them.
_ELSEWHERE = (MovedError, AskError, TryAgainError, ClusterDownError)


class _Connection(Protocol):
    """What a ``DirectScript`` uses of a redis-py connection."""

    def send_command(self, *args: Any) -> None: ...
    def send_packed_command(self, command: list[bytes], check_health: bool = True) -> None: ...
    def read_response(self) -> Any: ...
    def disconnect(self) -> None: ...


REPLICA_WAIT_MS: Final = 250
"""How long a write waits for its replicas (``WAIT``) before the caller is answered anyway (and it is counted)."""


class DirectScript:
    """Runs one script like ``client.register_script(text)``, over connections of its own (thread-safe).

    With ``replicas``, the script's writes are also acknowledged by that many replicas before its reply is returned:
    ``WAIT`` is sent with it, in the same round trip, on the same connection (it waits for that connection's
    writes). Fewer in ``REPLICA_WAIT_MS`` is logged and counted: the write stands on the master, and a failover
    before the replicas catch up could lose it.
    """

    def __init__(self, client: redis.Redis, text: str, *, replicas: int = 0) -> None:
        """Register ``text`` with ``client`` (the fallback); connections are made as calls need them."""
        self._client = client
        self._pooled = client.register_script(text)
        self._text = text
        self._replicas = replicas
        # deque.append and deque.pop are atomic: the idle connections need no lock.
        self._idle: dict[str, deque[_Connection]] = {}

    def __call__(self, *, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """The script's reply for ``keys`` (all in one slot) and ``args``."""
        return self.replicated(keys=keys, args=args)[0]

    def replicated(self, *, keys: Sequence[str], args: Sequence[Any]) -> tuple[Any, bool]:
        """The script's reply, and whether its writes are known held by ``replicas`` replicas (always, with none)."""
        node = self._node_of(keys[0])
        idle = self._idle.get(node)
        if idle is None:  # setdefault would build a deque on every call of this hot path
            idle = self._idle.setdefault(node, deque())
        try:
            connection = idle.pop()
        except IndexError:
            connection = cast(_Connection, self._pool_for(keys[0]).make_connection())
        try:
            try:
                reply = self._send(connection, keys, args)
            except NoScriptError:
                connection.send_command("SCRIPT", "LOAD", self._text)
                connection.read_response()
                reply = self._send(connection, keys, args)
        except redis.TimeoutError as error:
            # The server took the whole reply timeout: it is paused or cut off, and a second try would wait as long
            # again (a script that runs late writes nothing: it is given when its caller stops waiting).
            connection.disconnect()
            metrics.redis_failed(error)
            raise
        except (redis.ConnectionError, *_ELSEWHERE):
            # Nothing is known of the reply and the connection may hold half of one: it is dropped. The pooled call
            # retries (a click whose script did run is then answered "replayed": never a second decision).
            connection.disconnect()
            return self._fallback(keys, args)
        except BaseException:
            connection.disconnect()  # a script error is a whole reply, but an interrupted read is not: never reused
            raise
        idle.append(connection)
        return reply

    def _send(self, connection: _Connection, keys: Sequence[str], args: Sequence[Any]) -> tuple[Any, bool]:
        # Packed by hiredis at once (redis-py's packer looks at every argument in Python first: 11 us for a
        # click's 60, against 4), and no health check: an idle connection that broke fails the send or the
        # read, and the pooled call retries.
        command = hiredis.pack_command(("EVALSHA", self._pooled.sha, len(keys), *keys, *args))
        if not self._replicas:
            connection.send_packed_command([command], check_health=False)
            return connection.read_response(), True
        wait_command: tuple[Any, ...] = ("WAIT", self._replicas, REPLICA_WAIT_MS)
        wait = hiredis.pack_command(wait_command)
        connection.send_packed_command([command, wait], check_health=False)
        try:
            reply = connection.read_response()
        except redis.ResponseError:
            connection.read_response()  # WAIT's answer too: the connection stays in step for its next use
            raise
        return reply, self._held(connection.read_response())

    def _fallback(self, keys: Sequence[str], args: Sequence[Any]) -> tuple[Any, bool]:
        # The pooled call. WAIT waits for the writes of its own connection only: with replicas it is pipelined
        # after the script on one pooled connection of the node holding the key (the pool retries the pair in place).
        if not self._replicas:
            return self._pooled(keys=list(keys), args=list(args)), True
        cluster = isinstance(self._client, RedisCluster)
        for _ in range(2 if cluster else 1):
            try:
                return self._pooled_with_wait(keys, args)
            except (redis.ConnectionError, *_ELSEWHERE):
                if not cluster:
                    raise
                # The slot moved or its node is failing over: the cluster's layout is read again, and tried once more.
                with reaching():
                    cast(RedisCluster, self._client).nodes_manager.initialize()
        # Still elsewhere: the cluster's own call follows it, but no WAIT can follow it to its connection.
        reply = self._pooled(keys=list(keys), args=list(args))
        return reply, self._held(0)

    def _pooled_with_wait(self, keys: Sequence[str], args: Sequence[Any]) -> tuple[Any, bool]:
        client = self._client
        if isinstance(client, RedisCluster):
            client = cast(redis.Redis, client.get_node_from_key(keys[0]).redis_connection)
        with client.pipeline(transaction=False) as pipeline:
            self._pooled(keys=list(keys), args=list(args), client=pipeline)  # loads the script first if missing
            pipeline.wait(self._replicas, REPLICA_WAIT_MS)
            reply, acknowledged = pipeline.execute()
        return reply, self._held(acknowledged)

    def _held(self, acknowledged: Any) -> bool:
        # Whether WAIT's count of replicas is enough; if not, the write is logged and counted.
        if int(acknowledged) >= self._replicas:
            return True
        logger.warning(
            "a write was acknowledged by %s of %s replicas in %s ms: a failover now could lose it",
            acknowledged,
            self._replicas,
            REPLICA_WAIT_MS,
        )
        metrics.unreplicated_write()
        return False

    def queue(self, pipeline: redis.client.Pipeline, *, keys: Sequence[str], args: Sequence[Any]) -> None:
        """Queue the script in ``pipeline``, by its SHA, with the reads it is sent with.

        A server that does not hold the script answers ``NoScriptError`` in that command's place: the caller runs it
        again through ``__call__``, which loads it.
        """
        pipeline.execute_command("EVALSHA", self._pooled.sha, len(keys), *keys, *args)  # type: ignore[no-untyped-call]

    def _node_of(self, key: str) -> str:
        if isinstance(self._client, RedisCluster):
            return str(self._client.get_node_from_key(key).name)
        return ""

    def _pool_for(self, key: str) -> redis.ConnectionPool:
        if isinstance(self._client, RedisCluster):
            node = self._client.get_node_from_key(key)
            return cast(redis.Redis, node.redis_connection).connection_pool
        return self._client.connection_pool
