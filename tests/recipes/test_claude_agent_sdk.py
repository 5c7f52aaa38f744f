"""The Claude Agent SDK recipe with the real SDK and its bundled ``claude`` CLI, against a scripted stand-in for
the Messages API on loopback (no network): the model calls an in-process tool, the CLI asks ``can_use_tool``,
the sign-off is asked through the HTTP API and decided in the loopback Slack, and the tool runs, or the model
is told why not."""

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, create_sdk_mcp_server, tool

from bot.mcp.server import permission_answer
from bot.render import action_ids as ids
from recipes.claude_agent_sdk import permission_result, run_with_signoff
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import APPROVER, CHANNEL, Bot

TOOL = "mcp__ops__restart_service"  # the CLI's name for the tool restart_service of the SDK server "ops"


class MessagesApi:
    """A scripted model behind ``POST /v1/messages``: while no tool result came back, it calls the tool;
    then it answers "done". Streams as the real API does; keeps every request's body."""

    def __init__(self) -> None:
        """Listen on a free loopback port."""
        self.requests: list[dict[str, Any]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                stand_in.requests.append(body)
                if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
                    self.send_error(404)  # the CLI needs nothing else with non-essential traffic off
                    return
                data = _stream(stand_in.reply_to(body))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def reply_to(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        """The turn's content blocks and stop reason."""
        offered = any(offer.get("name") == TOOL for offer in body.get("tools") or [])
        if offered and not _tool_results(body):
            call = {"type": "tool_use", "id": "toolu_1", "name": TOOL, "input": {"service": "checkout"}}
            return [call], "tool_use"
        return [{"type": "text", "text": "done"}], "end_turn"

    def tool_results(self) -> list[dict[str, Any]]:
        """What the model was last told about its tool calls."""
        return _tool_results(self.requests[-1])


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def _stream(turn: tuple[list[dict[str, Any]], str]) -> bytes:
    """The turn as the Messages API's server-sent events (``stream: true``, which the CLI always asks for)."""
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


@pytest.fixture
def messages_api() -> Iterator[MessagesApi]:
    """The stand-in, served in a thread."""
    api = MessagesApi()
    thread = threading.Thread(target=api.server.serve_forever, name="messages-api", daemon=True)
    thread.start()
    try:
        yield api
    finally:
        api.server.shutdown()
        api.server.server_close()
        thread.join(10)


def _options(messages_api: MessagesApi, home: Path, ran: list[str]) -> ClaudeAgentOptions:
    @tool("restart_service", "Restart every replica of a service.", {"service": str})
    async def restart_service(args: dict[str, Any]) -> dict[str, Any]:
        ran.append(args["service"])
        return {"content": [{"type": "text", "text": f"{args['service']}: restarted"}]}

    return ClaudeAgentOptions(
        tools=[],  # no built-in tools: the scripted model can only call ours (and no tool search defers it)
        mcp_servers={"ops": create_sdk_mcp_server("ops", tools=[restart_service])},
        cwd=home,
        env={
            "ANTHROPIC_BASE_URL": messages_api.url,
            "ANTHROPIC_API_KEY": "sk-ant-recipe-test",
            # Off: telemetry, error reports, update checks, the session title's model call (all leave loopback).
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            # The CLI reads and writes its settings and sessions there: a fresh one, not the runner's.
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        },
    )


def _run(options: ClaudeAgentOptions, bot: Bot, api_key: str, run_id: str) -> ResultMessage:
    run = run_with_signoff(
        "restart checkout", options, api_url=bot.url, api_key=api_key, channel=CHANNEL, run_id=run_id
    )
    return asyncio.run(asyncio.wait_for(run, 120))  # a CLI that hangs fails the test instead of the job


def test_an_approved_call_runs_after_the_click(
    bot: Bot, api_key: str, messages_api: MessagesApi, tmp_path: Path
) -> None:
    ran: list[str] = []
    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
        result = _run(_options(messages_api, tmp_path, ran), bot, api_key, "r1")
    assert ran == ["checkout"]
    assert result.result == "done"
    [message] = bot.approval_messages()
    assert "restart_service" in message["text"]
    [told] = messages_api.tool_results()
    assert told["content"] == [{"type": "text", "text": "checkout: restarted"}]
    assert not told.get("is_error")


def test_a_denied_call_never_runs_and_the_model_is_told_why(
    bot: Bot, api_key: str, messages_api: MessagesApi, tmp_path: Path
) -> None:
    ran: list[str] = []
    deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="peak traffic")  # noqa: E731
    with person_in_slack(bot, deny):
        result = _run(_options(messages_api, tmp_path, ran), bot, api_key, "r2")
    assert ran == []
    assert result.result == "done"
    [told] = messages_api.tool_results()
    assert told["content"] == f"Denied in Slack by {APPROVER}: peak traffic. Do not retry this call."
    assert told["is_error"] is True


@pytest.mark.parametrize(
    "decided",
    [
        {"status": "approved", "decision": {"decided_by": APPROVER}},
        {"status": "denied", "decision": {"decided_by": APPROVER, "reason": "peak traffic"}},
        {"status": "denied", "decision": {}},
        {"status": "expired"},
        {"status": "cancelled", "decision": {"reason": "the run was stopped"}},
        {"status": "pending"},
    ],
)
def test_the_callback_answers_as_the_mcp_permission_prompt_does(decided: dict[str, Any]) -> None:
    tool_input = {"service": "checkout"}
    answer = permission_answer(decided, tool_input)
    result = permission_result(decided, tool_input)
    assert result.behavior == answer["behavior"]
    if answer["behavior"] == "allow":
        assert getattr(result, "updated_input", None) == answer["updatedInput"]
    else:
        assert getattr(result, "message", None) == answer["message"]
