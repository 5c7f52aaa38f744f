"""A real, private Redis Cluster on loopback, for tests and benchmarks.

Its nodes are ``RedisServer`` processes of the same binary started with ``cluster-enabled yes``.
The 16384 slots are split evenly over the masters (``CLUSTER ADDSLOTSRANGE``), the nodes are
joined with ``CLUSTER MEET`` and each replica follows its master (``CLUSTER REPLICATE``).
``start()`` returns once every node reports ``cluster_state:ok`` with every node known, so a
client started then finds a settled cluster.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import redis

from state.redis_server import RedisServer, RedisServerError, control_client, find_server_binary

SLOTS: Final = 16384
NODE_TIMEOUT_MS: Final = 1000
"""How long a master may be unreachable before the cluster fails it over (short: tests stay fast)."""
_SETTLE_TIMEOUT_S: Final = 30.0


def slot_ranges(masters: int) -> list[tuple[int, int]]:
    """The even split of the slots over ``masters``: first and last slot of each, inclusive."""
    bounds = [SLOTS * index // masters for index in range(masters + 1)]
    return [(bounds[index], bounds[index + 1] - 1) for index in range(masters)]


@dataclass
class RedisClusterServers:
    """A cluster of ``masters`` masters with ``replicas`` replicas each; use it as a context manager.

    Attributes:
        masters: How many masters share the slots.
        replicas: Replicas per master (one takes over when its master dies).
        binary: The server binary (default: ``find_server_binary()``).
        nodes: The servers: the masters first (in slot order), then the replicas.
    """

    masters: int = 3
    replicas: int = 0
    binary: Path | None = None
    nodes: list[RedisServer] = field(default_factory=list, init=False)

    @property
    def url(self) -> str:
        """The URL of the first node: like a configuration endpoint, it names one node of the cluster."""
        return self.nodes[0].url

    def start(self) -> "RedisClusterServers":
        """Start every node, assign the slots, join the nodes, and wait until the cluster is ok.

        Raises:
            RedisServerError: A node did not start or the cluster did not settle.
        """
        binary = self.binary or find_server_binary()
        options = (
            "--cluster-enabled", "yes",
            "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
            "--cluster-require-full-coverage", "no",  # a master's failover leaves the others serving (docs/redis.md)
            "--appendonly", "no",  # a cluster here lives for one run: no fsync on the way
            "--repl-diskless-sync-delay", "0",  # a replica syncs at once (by default the master waits 5 s)
        )  # fmt: skip
        try:
            for _ in range(self.masters * (1 + self.replicas)):
                node = RedisServer(binary=binary, extra_args=options)
                self.nodes.append(node)
                node.start()
            self._assemble()
        except BaseException:
            self.stop()
            raise
        return self

    def _assemble(self) -> None:
        clients = [control_client(node.port, timeout=2) for node in self.nodes]
        try:
            for client, (first, last) in zip(clients, slot_ranges(self.masters), strict=False):
                _command(client, "CLUSTER ADDSLOTSRANGE", first, last)
            for client in clients[1:]:
                _command(client, "CLUSTER MEET", "127.0.0.1", self.nodes[0].port)
            _wait(lambda: all(_info(client)["cluster_known_nodes"] == str(len(clients)) for client in clients), "meet")
            master_ids = [_text(_command(client, "CLUSTER MYID")) for client in clients[: self.masters]]
            for index, client in enumerate(clients[self.masters :]):
                _command(client, "CLUSTER REPLICATE", master_ids[index % self.masters])
            _wait(lambda: all(_settled(client, self.masters) for client in clients), "settle")
            replicas = clients[self.masters :]
            _wait(lambda: all(client.info("replication")["master_link_status"] == "up" for client in replicas), "sync")
        finally:
            for client in clients:
                client.close()

    def master_of_slot(self, slot: int) -> RedisServer:
        """The node that serves ``slot``, as the running nodes see it now (a replica once it took over).

        Raises:
            RedisServerError: The running nodes do not agree on a running node.
        """
        ports = set()
        for node in self.nodes:
            if node.running:
                client = control_client(node.port, timeout=1)
                try:
                    ports.add(_primary_port(client, slot))
                finally:
                    client.close()
        serving = [node for node in self.nodes if node.running and {node.port} == ports]
        if not serving:
            raise RedisServerError(f"slot=<{slot}> | served by {sorted(ports)}, not one running node")
        return serving[0]

    def wait_served(self, slot: int) -> RedisServer:
        """Wait until the cluster is ok and every running node agrees that a running node serves ``slot``.

        After a master was killed, its replica took over; return that node.

        Raises:
            RedisServerError: It did not happen within the settle timeout.
        """
        served: list[RedisServer] = []

        def ok() -> bool:
            try:
                served[:] = [self.master_of_slot(slot)]
            except RedisServerError:
                return False
            return all(self._state(node) == "ok" for node in self.nodes if node.running)

        _wait(ok, f"serve slot {slot}")
        return served[0]

    @staticmethod
    def _state(node: RedisServer) -> str:
        client = control_client(node.port, timeout=1)
        try:
            return _info(client)["cluster_state"]
        finally:
            client.close()

    def stop(self) -> None:
        """Stop every node (a node already killed only has its directory removed)."""
        for node in self.nodes:
            node.stop()
        self.nodes.clear()

    def __enter__(self) -> "RedisClusterServers":
        """Start the cluster (``start``)."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Stop every node (``stop``)."""
        self.stop()


def _wait(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + _SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if done():
                return
        except redis.RedisError:
            pass  # a node still starting or just elected: ask again
        time.sleep(0.05)
    raise RedisServerError(f"cluster did not {what} within {_SETTLE_TIMEOUT_S:.0f}s")


def _info(client: redis.Redis) -> dict[str, str]:
    reply = _command(client, "CLUSTER INFO")  # redis-py parses it into a dict
    return {
        _text(name): _text(value) if isinstance(value, bytes | str) else str(value) for name, value in reply.items()
    }


def _settled(client: redis.Redis, masters: int) -> bool:
    """The node sees the whole slot map served by ``masters`` masters (replicas attached or not)."""
    info = _info(client)
    settled = info["cluster_state"] == "ok" and info["cluster_slots_ok"] == str(SLOTS)
    return settled and info["cluster_size"] == str(masters)


def _primary_port(client: redis.Redis, slot: int) -> int:
    for first, last, primary, *_replicas in _command(client, "CLUSTER SLOTS"):
        if int(first) <= slot <= int(last):
            return int(primary[1])
    return 0


def _command(client: redis.Redis, *args: str | int) -> Any:
    return client.execute_command(*args)  # type: ignore[no-untyped-call]  # CLUSTER commands have no typed method


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
