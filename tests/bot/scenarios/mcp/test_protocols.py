"""``permission_prompt`` answers in the one shape Claude Code accepts (exactly one text block, nothing structured
beside it) under every protocol version the ``mcp`` package speaks: each handshake version spoken as raw
JSON-RPC over stdio, exactly as a client of that version sends it, and the stateless 2026-07-28 era through the
package's own client."""

import json
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from bot.mcp.server import PERMISSION_TOOL
from bot.render import action_ids as ids
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot
from tests.bot.support.mcp_servers import mcp_environment, stdio_server
from tests.bot.support.people import APPROVER
from tests.bot.support.processes import bot_environment, start_bot

pytestmark = pytest.mark.single_redis

COMMAND = {"command": "make deploy"}


class HandshakeSession:
    """``python -m bot mcp`` over stdio, spoken to line by line in one handshake-era protocol version."""

    def __init__(self, process: subprocess.Popen[str], version: str) -> None:
        """Initialize the connection in ``version``; the server must accept it as it is."""
        self.process = process
        self._next_id = 0
        initialized = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw-json-rpc", "version": "1"},
            },
        )
        assert initialized["protocolVersion"] == version
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request and its result (notifications in between are skipped)."""
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if message.get("id") == self._next_id:
                assert "error" not in message, message
                return dict(message["result"])
        raise AssertionError(f"the server ended before answering {method}")

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()


@contextmanager
def _handshake_sessions(bot: Bot) -> Iterator[dict[str, HandshakeSession]]:
    environment = bot_environment(**mcp_environment(bot))
    with ExitStack() as stack:
        sessions = {}
        for version in HANDSHAKE_PROTOCOL_VERSIONS:
            process = start_bot(["mcp"], environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            stack.callback(_end, process)
            sessions[version] = HandshakeSession(process, version)
        yield sessions


def _end(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.close()  # the stdio server ends with its input
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _the_one_text_block(result: dict[str, Any]) -> dict[str, Any]:
    assert "structuredContent" not in result, result
    assert not result.get("isError"), result
    [block] = result["content"]
    assert set(block) == {"type", "text"}
    assert block["type"] == "text"
    assert isinstance(block["text"], str)
    return dict(json.loads(block["text"]))


def test_every_handshake_version_gets_one_text_block_and_no_output_schema(bot: Bot) -> None:
    approve = lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)  # noqa: E731
    deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="not now")  # noqa: E731
    with _handshake_sessions(bot) as sessions:
        answers: dict[str, list[dict[str, Any]]] = {}
        for decide, tool_use_id in ((approve, "toolu_allowed"), (deny, "toolu_denied")):
            with person_in_slack(bot, decide):
                for version, session in sessions.items():
                    [tool] = [t for t in session.request("tools/list", {})["tools"] if t["name"] == PERMISSION_TOOL]
                    assert "outputSchema" not in tool, (version, tool)
                    arguments = {"tool_name": "Bash", "input": COMMAND, "tool_use_id": tool_use_id}
                    result = session.request("tools/call", {"name": PERMISSION_TOOL, "arguments": arguments})
                    answers.setdefault(version, []).append(_the_one_text_block(result))
    denial = {"behavior": "deny", "message": f"Denied in Slack by {APPROVER}: not now. Do not retry this call."}
    assert answers == {version: [{"behavior": "allow", "updatedInput": COMMAND}, denial] for version in sessions}
    assert len(bot.approval_messages()) == 2  # each tool use asked once, whichever version asked


@pytest.mark.parametrize("version", MODERN_PROTOCOL_VERSIONS)
def test_the_stateless_era_gets_one_text_block_and_no_output_schema(bot: Bot, version: str) -> None:
    async def session() -> tuple[Any, Any]:
        async with Client(stdio_server(mcp_environment(bot)), mode=version) as client:
            assert client.protocol_version == version
            listed = await client.list_tools()
            arguments = {"tool_name": "Bash", "input": COMMAND, "tool_use_id": "toolu_modern"}
            return listed, await client.call_tool(PERMISSION_TOOL, arguments)

    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
        listed, result = anyio.run(session)
    [tool] = [tool for tool in listed.tools if tool.name == PERMISSION_TOOL]
    assert tool.output_schema is None
    answer = _the_one_text_block(result.model_dump(by_alias=True, exclude_none=True))
    assert answer == {"behavior": "allow", "updatedInput": COMMAND}
