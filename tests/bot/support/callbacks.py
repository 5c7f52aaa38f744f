"""A client's callback endpoint on loopback: records what the worker POSTs to it (optionally failing the first)."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver(BaseHTTPRequestHandler):
    """Keeps each callback's headers and body (``received``), sets ``arrived``; 503 to the first when told to."""

    received: list[tuple[dict[str, str], bytes]]
    arrived: threading.Event
    fail_first: list[bool]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.fail_first and self.fail_first.pop():
            self.send_response(503)
            self.end_headers()
            return
        self.received.append((dict(self.headers.items()), body))
        self.arrived.set()
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def callback_receiver(*, fail_first: bool = False) -> Iterator[tuple[str, type[Receiver]]]:
    """A receiver served on loopback: its URL, and its class holding what arrived."""
    handler = type("Receiver", (Receiver,), {"received": [], "arrived": threading.Event(), "fail_first": [fail_first]})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/signoff", handler
    finally:
        server.shutdown()
        server.server_close()
