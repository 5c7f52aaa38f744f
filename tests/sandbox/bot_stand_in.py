"""A stand-in for the bot, for tests of the sandbox alone: it checks each request's Slack signature, records the
interaction payloads, runs a listener on button clicks and answers modal submissions as the test says."""

import json
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs

from slack_sdk.signature import SignatureVerifier

from loopback_slack.slack_requests import SignedPoster

JsonDict = dict[str, Any]


class BotStandIn:
    """An HTTP server on a loopback port that answers what the sandbox sends the bot.

    ``payloads`` are the interaction payloads received, in order. ``on_click`` runs for each ``block_actions`` before
    the answer (as a listener opening a modal would). A ``view_submission`` is answered with the next of ``answers``,
    or ``{}`` (the modal closes) when none is left. A request whose signature does not verify gets HTTP 401.
    """

    def __init__(self, *, on_click: Callable[[JsonDict], None] | None = None) -> None:
        self.signing_secret = secrets.token_hex(16)
        self.on_click = on_click
        self.payloads: list[JsonDict] = []
        self.answers: list[JsonDict] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, name="bot-stand-in", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def poster(self) -> SignedPoster:
        """What ``SandboxSlack.connect`` takes: requests signed with this stand-in's secret, sent to it."""
        return SignedPoster(f"http://127.0.0.1:{self._server.server_port}", self.signing_secret)

    def submissions(self) -> list[JsonDict]:
        return [payload for payload in self.payloads if payload.get("type") == "view_submission"]

    def _answer(self, headers: dict[str, str], body: bytes) -> tuple[int, JsonDict]:
        verifier = SignatureVerifier(self.signing_secret)
        timestamp, signature = headers.get("x-slack-request-timestamp", ""), headers.get("x-slack-signature", "")
        if not verifier.is_valid(body=body, timestamp=timestamp, signature=signature):
            return 401, {}
        payload: JsonDict = json.loads(parse_qs(body.decode("utf-8"))["payload"][0])
        self.payloads.append(payload)
        if payload["type"] == "block_actions" and self.on_click is not None:
            self.on_click(payload)
        if payload["type"] == "view_submission" and self.answers:
            return 200, self.answers.pop(0)
        return 200, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, answer = stand_in._answer({k.lower(): v for k, v in self.headers.items()}, body)
                data = json.dumps(answer).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
