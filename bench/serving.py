"""HTTP on this machine, for benches and tests: a free port, the wait for ``/healthz``, the stop; a JSON answer."""

import http.client
import json
import subprocess
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from state.redis_server import free_loopback_port


def free_port() -> int:
    """A loopback port nothing listens on now, for a server started on it (never one the kernel may hand out meanwhile:
    ``state.redis_server.free_loopback_port``)."""
    return free_loopback_port()


def wait_healthy(
    port: int,
    processes: Iterable[subprocess.Popen[Any]] = (),
    *,
    failure: str = "the server did not start",
    timeout_s: float = 30,
) -> None:
    """Return once ``/healthz`` answers 200 on ``port``.

    Raises:
        RuntimeError: ``failure``, when one of ``processes`` ended or ``timeout_s`` passed first.
    """
    watched = list(processes)
    deadline = time.monotonic() + timeout_s
    while not _healthy(port):
        if time.monotonic() > deadline or any(process.poll() is not None for process in watched):
            raise RuntimeError(failure)
        time.sleep(0.05)


def _healthy(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def stop(processes: Iterable[subprocess.Popen[Any]], *, grace_s: float = 15) -> None:
    """Terminate each process (SIGTERM), then kill the ones still running ``grace_s`` later."""
    running = list(processes)
    for process in running:
        process.terminate()
    for process in running:
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def send_json(handler: BaseHTTPRequestHandler, answer: object) -> None:
    """Answer the handler's request with ``answer`` as JSON (200), flushed before the handler goes on."""
    body = json.dumps(answer).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
    handler.wfile.flush()
