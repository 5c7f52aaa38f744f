"""Serve a WSGI app (e.g. ``slack_bolt.adapter.wsgi.SlackRequestHandler(app)``), or any server, on a loopback port."""

from __future__ import annotations

import socketserver
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

if TYPE_CHECKING:
    from wsgiref.types import WSGIApplication

__all__ = ["in_background", "serve_wsgi"]


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    """One daemon thread per request, so a slow handler never blocks the next request or interpreter exit."""

    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves socket.getfqdn(host), which can stall on DNS; a loopback name will do.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)
        self.setup_environ()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return  # the client hung up mid-request: not the app's fault, not worth a traceback
        super().handle_error(request, client_address)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr."""


@contextmanager
def serve_wsgi(wsgi_app: WSGIApplication, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run ``wsgi_app`` on a background thread; yield its base URL (``http://127.0.0.1:<port>/``); stop on exit."""
    server = make_server(host, port, wsgi_app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
    with in_background(server, "serve_wsgi", poll_interval=0.05):
        yield f"http://{host}:{server.server_port}/"


@contextmanager
def in_background(server: socketserver.BaseServer, name: str, *, poll_interval: float = 0.5) -> Iterator[None]:
    """Serve ``server`` on the daemon thread ``name`` while the block runs; then shut it down, close it, join it."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": poll_interval}, name=name, daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)  # at once: shutdown() returns once serve_forever has
