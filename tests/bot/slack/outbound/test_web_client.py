"""The kept-alive Web API client, over real HTTP: reuse, a connection the server dropped, errors as WebClient's."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError

from bot.slack.outbound.web_client import KeepAliveWebClient
from tests.bot.support.fake_slack import FakeSlack


class _DropsIdleConnections(BaseHTTPRequestHandler):
    """Answers ``{"ok": true}`` over HTTP/1.1, then closes the connection without saying so (an idle timeout)."""

    protocol_version = "HTTP/1.1"
    requests: list[str] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).requests.append(self.path)
        body = json.dumps({"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def dropping_server() -> Iterator[str]:
    _DropsIdleConnections.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DropsIdleConnections)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/"
    server.shutdown()
    server.server_close()


def test_calls_in_a_row_share_one_connection() -> None:
    with FakeSlack() as slack:
        client = KeepAliveWebClient(token=slack.token, base_url=slack.url, timeout=5)
        for index in range(5):
            assert client.chat_postMessage(channel="C0OPS", text=f"hello {index}")["ok"]
        assert client.connections_opened == 1
        assert [call.args["text"] for call in slack.calls("chat.postMessage")] == [f"hello {i}" for i in range(5)]


def test_each_thread_keeps_its_own_connection() -> None:
    with FakeSlack() as slack:
        client = KeepAliveWebClient(token=slack.token, base_url=slack.url, timeout=5)

        def post_three(channel: str) -> None:
            for index in range(3):
                client.chat_postMessage(channel=channel, text=f"{channel} {index}")

        threads = [threading.Thread(target=post_three, args=(f"C0{index}",)) for index in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert client.connections_opened == 3
        assert len(slack.calls("chat.postMessage")) == 9


def test_a_connection_the_server_dropped_is_replaced_and_the_call_sent_once(dropping_server: str) -> None:
    client = KeepAliveWebClient(token="xoxb-test", base_url=dropping_server, timeout=5, retry_handlers=[])
    assert client.api_call("chat.postMessage", params={"channel": "C0OPS", "text": "one"})["ok"]
    assert client.api_call("chat.postMessage", params={"channel": "C0OPS", "text": "two"})["ok"]
    assert _DropsIdleConnections.requests == ["/api/chat.postMessage", "/api/chat.postMessage"]
    assert client.connections_opened == 2


def test_slack_errors_and_rate_limits_surface_as_with_web_client() -> None:
    with FakeSlack() as slack:
        client = KeepAliveWebClient(token=slack.token, base_url=slack.url, timeout=5)
        slack.fail_next("chat.postMessage", status=429, retry_after=7)
        with pytest.raises(SlackApiError) as limited:
            client.chat_postMessage(channel="C0OPS", text="hello")
        assert limited.value.response.status_code == 429
        assert limited.value.response.headers["Retry-After"] == "7"

        slack.error_next("chat.postMessage", "channel_not_found")
        with pytest.raises(SlackApiError) as refused:
            client.chat_postMessage(channel="C0OPS", text="hello")
        assert refused.value.response["error"] == "channel_not_found"

        assert client.chat_postMessage(channel="C0OPS", text="hello")["ok"]
        assert client.connections_opened == 1  # an error answer leaves the connection usable
