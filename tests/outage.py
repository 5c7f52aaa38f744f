"""Redis stopped for one step (the same server, shut down cleanly and started again on its port with its data), or
paused (it keeps every connection and answers nothing, as a partition looks); a whole cluster likewise."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from state import RedisServer
from state.redis_cluster import RedisClusterServers
from state.redis_server import control_client


@contextmanager
def redis_stopped(server: RedisServer) -> Iterator[None]:
    """Redis is down inside the block (connections refused) and back, with its data, after it."""
    server.stop()
    try:
        yield
    finally:
        server.start()


@contextmanager
def redis_paused(server: RedisServer) -> Iterator[None]:
    """Redis answers nothing inside the block (SIGSTOP: connections hang, none is refused) and runs on after it."""
    server.pause()
    try:
        yield
    finally:
        server.resume()


@contextmanager
def cluster_paused(cluster: RedisClusterServers) -> Iterator[None]:
    """No node of ``cluster`` answers inside the block (each paused: none is refused) and they run on after it."""
    for node in cluster.nodes:
        node.pause()
    try:
        yield
    finally:
        for node in cluster.nodes:
            node.resume()


@contextmanager
def cluster_down(cluster: RedisClusterServers) -> Iterator[None]:
    """Every node of ``cluster`` is killed inside the block (connections refused) and back after it, with its data
    (saved first) and its place in the cluster (its ``nodes.conf``), on its port."""
    for node in cluster.nodes:
        client = control_client(node.port, timeout=5)
        try:
            client.save()
        finally:
            client.close()
        node.kill()
    try:
        yield
    finally:
        for node in cluster.nodes:
            node.start()
        cluster.wait_served(0)


class TimedOutage:
    """Redis stopped at a chosen point (``begin()``, e.g. from a hook) and back ``pause_s`` later, from a timer.

    The code under test keeps running meanwhile, as it would in production; ``settle()`` waits for
    the restart so no server outlives the test.
    """

    def __init__(self, server: RedisServer, pause_s: float) -> None:
        """Nothing stops until ``begin()``."""
        self.server = server
        self.pause_s = pause_s
        self.restarted = threading.Event()
        self._timer: threading.Timer | None = None

    def begin(self) -> None:
        """Stop the server now; it starts again (same port, same data) ``pause_s`` from now."""
        self.server.stop()
        self._timer = threading.Timer(self.pause_s, self._restart)
        self._timer.start()

    @property
    def begun(self) -> bool:
        """Whether ``begin()`` was called."""
        return self._timer is not None

    def settle(self) -> None:
        """Wait until the restart happened (if an outage began)."""
        if self._timer is not None:
            self._timer.join(30)

    def _restart(self) -> None:
        self.server.start()
        self.restarted.set()


class StopRedisAfterTool:
    """Hook, for Signoff's runtime or Strands': Redis stops right after a tool returns (before its result is saved).

    ``after_tool_event`` is the runtime's ``AfterToolCallEvent``; with ``tool``, only that tool's return stops it.
    The outage begins once.
    """

    def __init__(self, outage: TimedOutage, after_tool_event: type[Any], *, tool: str | None = None) -> None:
        self.outage = outage
        self.after_tool_event = after_tool_event
        self.tool = tool

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(self.after_tool_event, self._after_tool)

    def _after_tool(self, event: Any) -> None:
        if not self.outage.begun and (self.tool is None or event.tool_use["name"] == self.tool):
            self.outage.begin()
