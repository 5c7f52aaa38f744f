"""``python -m bot mcp`` for a test: its environment (a fresh API key of the test's bot), over stdio or HTTP."""

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from mcp.client.stdio import StdioServerParameters

from bench.serving import free_port
from tests.bot.support.harness import Bot
from tests.bot.support.people import CHANNEL, REQUESTER
from tests.bot.support.processes import ROOT, bot_environment


def mcp_environment(bot: Bot, **extra: str) -> dict[str, str]:
    """The MCP server's settings: the bot's API, a new key (client ``claude-ci``), its channel and requester."""
    issued = bot.services.stores.api_keys.create("claude-ci")
    assert issued is not None
    return {
        "SIGNOFF_API_URL": bot.url,
        "SIGNOFF_API_KEY": issued.key,
        "SIGNOFF_CHANNEL": CHANNEL,
        "SIGNOFF_REQUESTER": REQUESTER,
        **extra,
    }


def stdio_server(environment: dict[str, str]) -> StdioServerParameters:
    """The server as the ``mcp`` client starts it over stdio."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "bot", "mcp"], env=bot_environment(**environment), cwd=str(ROOT)
    )


@contextmanager
def http_server(environment: dict[str, str]) -> Iterator[str]:
    """Serve streamable HTTP on a free port; yield its ``/mcp`` URL; stop it on exit."""
    port = free_port()
    command = [sys.executable, "-m", "bot", "mcp", "--http", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env=bot_environment(**environment), stderr=subprocess.DEVNULL)
    try:
        _wait_listening(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, "the MCP server ended"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the MCP server never listened")
