"""A Slack Web API client that keeps its HTTP connection open between calls: one connection per thread.

``slack_sdk.WebClient`` opens a new connection (TCP, and TLS against Slack) for every call and
closes it after the answer. The outbox delivers call after call, so each thread keeps its own
connection and sends the next call on it: only the first call pays the handshake. Everything
else (retry handlers, errors, the response object) is ``WebClient``'s own.

A connection the server closed while it sat idle fails on the next send before the server read
anything; such a call is sent again once, at once, on a new connection. Connections idle longer
than ``idle_s`` are replaced before use, so that race stays rare.
"""

import http.client
import io
import threading
import time
from typing import Any, Final
from urllib.error import HTTPError
from urllib.parse import urlsplit
from urllib.request import Request

from slack_sdk import WebClient

IDLE_S: Final = 20.0  # below the idle timeouts of Slack's and common proxies' keep-alive connections
_STALE: Final = (http.client.RemoteDisconnected, ConnectionResetError, ConnectionAbortedError, BrokenPipeError)


class _Kept:
    """One thread's open connection, where to, and when it was last used."""

    def __init__(self, connection: http.client.HTTPConnection, netloc: str) -> None:
        self.connection = connection
        self.netloc = netloc
        self.used = time.monotonic()


class KeepAliveWebClient(WebClient):
    """``WebClient`` over one kept-alive HTTP connection per thread (safe to share between threads)."""

    def __init__(self, *args: Any, idle_s: float = IDLE_S, **kwargs: Any) -> None:
        """Arguments as ``WebClient``'s; ``idle_s``: replace a connection unused for longer than this."""
        super().__init__(*args, **kwargs)
        self._idle_s = idle_s
        self._kept = threading.local()
        self._count_lock = threading.Lock()
        self.connections_opened = 0
        """How many connections this client opened (all threads): a measure of reuse."""

    def _perform_urllib_http_request_internal(self, url: str, req: Request) -> dict[str, Any]:
        parts = urlsplit(url)
        if self.proxy is not None or parts.scheme not in ("http", "https"):
            return super()._perform_urllib_http_request_internal(url, req)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = dict(req.header_items())
        kept, reused = self._connection(parts.scheme, parts.netloc)
        try:
            response = self._exchange(kept.connection, req.get_method(), target, req.data, headers)
        except _STALE:
            self._drop()
            if not reused:
                raise
            kept, _reused = self._connection(parts.scheme, parts.netloc)
            try:
                response = self._exchange(kept.connection, req.get_method(), target, req.data, headers)
            except BaseException:
                self._drop()
                raise
        except BaseException:
            self._drop()  # half a request or answer on it: the connection is unusable
            raise
        status, message, body = response
        kept.used = time.monotonic()
        if message.get("Connection", "").lower() == "close":
            self._drop()
        if not 200 <= status < 300:
            # As urllib reports it, so ``WebClient`` handles the answer (429, 5xx) as it always does.
            raise HTTPError(url, status, str(status), message, io.BytesIO(body))
        if message.get_content_type() == "application/gzip":
            return {"status": status, "headers": message, "body": body}
        return {"status": status, "headers": message, "body": body.decode(message.get_content_charset() or "utf-8")}

    @staticmethod
    def _exchange(
        connection: http.client.HTTPConnection, method: str, target: str, body: Any, headers: dict[str, str]
    ) -> tuple[int, http.client.HTTPMessage, bytes]:
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.msg, response.read()

    def _connection(self, scheme: str, netloc: str) -> tuple[_Kept, bool]:
        """This thread's connection to ``netloc`` (a new one if it has none, or an idle one): (it, reused)."""
        kept: _Kept | None = getattr(self._kept, "value", None)
        if kept is not None and (kept.netloc != netloc or time.monotonic() - kept.used > self._idle_s):
            self._drop()
            kept = None
        if kept is not None:
            return kept, True
        if scheme == "https":
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                netloc, timeout=self.timeout, context=self.ssl
            )
        else:
            connection = http.client.HTTPConnection(netloc, timeout=self.timeout)
        kept = _Kept(connection, netloc)
        self._kept.value = kept
        with self._count_lock:
            self.connections_opened += 1
        return kept, False

    def _drop(self) -> None:
        kept: _Kept | None = getattr(self._kept, "value", None)
        self._kept.value = None
        if kept is not None:
            kept.connection.close()
