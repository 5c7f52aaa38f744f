"""The fake's HTTP transport: a threading server on loopback that hands each request to one function.

It writes back the ``Reply`` that function returns (holding it back for ``Reply.delay`` unless the server is closing).
Closing it cuts the connections it keeps alive too, so that a closed fake answers nobody, as a Slack that went away.
"""

import contextlib
import socket
import socketserver
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loopback_slack.calls import Reply

# (method, raw path with query string, headers with lower-case names, body) -> reply
Respond = Callable[[str, str, dict[str, str], bytes], Reply]


class HttpServer(ThreadingHTTPServer):
    """Serves ``respond`` on ``bind``; ``closing`` cuts short the replies it holds back."""

    daemon_threads = True

    def __init__(self, bind: tuple[str, int], respond: Respond, closing: threading.Event) -> None:
        """Listen on ``bind``; each request goes to ``respond``."""
        self.respond = respond
        self.closing = closing
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(bind, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve a connection in its own thread, remembered until it ends (``drop_connections``)."""
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        """Forget a connection that ended."""
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Cut every open connection: a kept-alive client of a closed server must not be answered any more."""
        with self._open_lock:
            open_now, self._open = list(self._open), set()
        for connection in open_now:
            with contextlib.suppress(OSError):  # closed by its client meanwhile
                connection.shutdown(socket.SHUT_RDWR)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), which can stall on a DNS lookup; a loopback name will do.
        """Bind without ``HTTPServer``'s fully qualified name lookup: the address as given names the server."""
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Report a request's error, except a client that hung up or timed out."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return  # a client hung up; nothing to report
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive for clients that want it
    disable_nagle_algorithm = True  # headers and body go out in two writes: without it a kept connection waits ~40 ms
    timeout = 30  # seconds an idle keep-alive connection may hold a thread
    server: HttpServer

    def __getattr__(self, name: str) -> Any:
        # BaseHTTPRequestHandler answers 501 for a method without a do_<METHOD>: every method is handed on
        # instead (the bot's HTTP API answers one its route does not serve with 405 and Allow).
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``LoopbackSlack.calls()`` instead of an access log."""

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.server.respond(self.command, self.path, headers, body)
        if reply.delay > 0:
            self.server.closing.wait(reply.delay)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":  # its answer has the headers of a GET, never a body
            self.wfile.write(reply.body)
