"""A scripted stand-in for Anthropic's Messages API on loopback, for the real ``claude`` CLI (no network).

While the model has not been told the result of its call, it makes the call; then it answers "done". It
streams as the real API does (the CLI always asks for ``stream: true``) and keeps every request's body.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.bot.support.http_server import in_background


@dataclass(frozen=True)
class ToolCall:
    """The one call the scripted model makes."""

    name: str
    input: dict[str, Any]
    id: str = "toolu_1"


@dataclass
class MessagesApi:
    """The model behind ``POST /v1/messages``; ``url`` is its base URL (``ANTHROPIC_BASE_URL``)."""

    call: ToolCall
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def reply_to(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        """The turn's content blocks and stop reason."""
        offered = any(offer.get("name") == self.call.name for offer in body.get("tools") or [])
        if offered and not tool_results(body):
            block = {"type": "tool_use", "id": self.call.id, "name": self.call.name, "input": self.call.input}
            return [block], "tool_use"
        return [{"type": "text", "text": "done"}], "end_turn"

    def tool_results(self) -> list[dict[str, Any]]:
        """What the model was last told about its tool calls."""
        return tool_results(self.requests[-1])


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of a Messages API request."""
    return [
        block
        for message in body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def result_text(result: dict[str, Any]) -> str:
    """A tool result's text, whether the CLI sent a string or text blocks."""
    content = result["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


@contextmanager
def serving(call: ToolCall) -> Iterator[MessagesApi]:
    """The stand-in, served in a thread on a free loopback port."""
    api = MessagesApi(call)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
                self.send_error(404)  # the CLI needs nothing else with non-essential traffic off
                return
            api.requests.append(body)
            data = _stream(api.reply_to(body))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    with in_background(server, "messages-api"):
        yield api


def cli_environment(api: MessagesApi, home: Path) -> dict[str, str]:
    """What the CLI needs to talk only to the stand-in, with a fresh home of its own."""
    return {
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-loopback-test",
        # Off: telemetry, error reports, update checks, the session title's model call (all leave loopback).
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        # The CLI reads and writes its settings and sessions there: a fresh one, not the runner's.
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
    }


def _stream(turn: tuple[list[dict[str, Any]], str]) -> bytes:
    """The turn as the Messages API's server-sent events."""
    blocks, stop_reason = turn
    usage = {"input_tokens": 1, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "scripted", "content": []}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "stop_reason": None, "stop_sequence": None, "usage": usage}}
    ]
    for index, block in enumerate(blocks):
        start: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            {"type": "content_block_start", "index": index, "content_block": start},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": usage},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events)
