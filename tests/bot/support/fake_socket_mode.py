"""A loopback Slack Socket Mode server: a minimal RFC 6455 WebSocket endpoint for ``slack_sdk``'s builtin client.

``FakeSocketModeServer`` listens on ``127.0.0.1:<random port>``. ``issue_url()`` mints a ticket and returns the
``ws://127.0.0.1:<port>/link/?ticket=...`` URL that ``apps.connections.open`` answers with (``FakeSlack`` does this);
a handshake with an unknown ticket is refused with HTTP 401. On connect the server sends Slack's ``hello``; the test
then pushes envelopes (``events_api``, ``interactive``, ``slash_commands``) with ``push`` and reads the app's acks
(``{"envelope_id", "payload"?}``) with ``acks`` / ``wait_for_ack``.

Only what Slack's server does is implemented: unfragmented text frames to the client (unmasked), masked frames from it
(text, ping, pong, close; continuation frames are reassembled), pong answers to pings, and close handshakes.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
import secrets
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Self, TypeVar
from urllib.parse import parse_qs, urlsplit

__all__ = ["Ack", "EnvelopeType", "FakeSocketModeServer"]

JsonDict = dict[str, Any]
EnvelopeType = Literal["events_api", "interactive", "slash_commands"]
_Found = TypeVar("_Found")

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_OP_CONTINUATION, _OP_TEXT, _OP_BINARY, _OP_CLOSE, _OP_PING, _OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_MAX_HANDSHAKE = 16 * 1024


def accept_key(sec_websocket_key: str) -> str:
    """``Sec-WebSocket-Accept`` for a client's ``Sec-WebSocket-Key`` (RFC 6455 section 4.2.2)."""
    return base64.b64encode(hashlib.sha1(sec_websocket_key.strip().encode("ascii") + _GUID).digest()).decode("ascii")


def encode_frame(opcode: int, payload: bytes, *, mask: bool = False) -> bytes:
    """One FIN frame; the server sends unmasked frames, a client masked ones."""
    first = 0x80 | opcode
    mask_bit = 0x80 if mask else 0
    length = len(payload)
    if length <= 125:
        header = struct.pack("!BB", first, mask_bit | length)
    elif length <= 0xFFFF:
        header = struct.pack("!BBH", first, mask_bit | 126, length)
    else:
        header = struct.pack("!BBQ", first, mask_bit | 127, length)
    if not mask:
        return header + payload
    key = secrets.token_bytes(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


@dataclass(frozen=True)
class Ack:
    """An acknowledgement the app sent: the envelope id, the response payload if any, and when it arrived."""

    envelope_id: str
    payload: JsonDict | None
    raw: JsonDict
    at: float


@dataclass
class _Connection:
    sock: socket.socket
    ticket: str
    number: int
    send_lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False

    def send(self, opcode: int, payload: bytes) -> None:
        with self.send_lock:
            if self.closed:
                raise ConnectionError(f"socket mode connection #{self.number} is closed")
            self.sock.sendall(encode_frame(opcode, payload))

    def shutdown(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)


class _ClientGone(Exception):
    """The client closed its side of the TCP connection."""


class FakeSocketModeServer:
    """A Socket Mode WebSocket server on ``127.0.0.1:<random port>``; thread-safe; a context manager.

    ``issue_url()`` for a connection URL; ``push`` / ``push_event`` / ``push_interactive`` / ``push_command`` to send
    envelopes to the connected app; ``acks`` / ``wait_for_ack`` for what it answered; ``wait_for_connection``,
    ``send_disconnect`` and ``drop_connections`` to exercise (re)connection.
    """

    def __init__(self, *, app_id: str = "A0APP", send_hello: bool = True) -> None:
        self.app_id = app_id
        self.send_hello = send_hello
        self._cond = threading.Condition(threading.RLock())
        self._closing = threading.Event()
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._tickets: set[str] = set()
        self._connections: list[_Connection] = []
        self._acks: list[Ack] = []
        self._messages: list[JsonDict] = []
        self._refused = 0
        self._envelope_ids = itertools.count(1)
        self._numbers = itertools.count(1)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        with self._cond:
            if self._listener is not None:
                return self
            self._closing.clear()
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            listener.settimeout(0.05)
            self._listener = listener
            self._spawn(self._accept_loop, "FakeSocketMode-accept")
        return self

    def close(self) -> None:
        with self._cond:
            listener, self._listener = self._listener, None
            if listener is None:
                return
            self._closing.set()
            connections = list(self._connections)
            threads, self._threads = list(self._threads), []
            self._cond.notify_all()
        for connection in connections:
            connection.shutdown()
        listener.close()
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout=5)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.sock.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        with self._cond:
            if self._listener is None:
                raise RuntimeError("FakeSocketModeServer is not running; use it as a context manager or call start()")
            return int(self._listener.getsockname()[1])

    def issue_url(self) -> str:
        """A fresh ``ws://`` URL with a ticket this server accepts (what ``apps.connections.open`` returns)."""
        ticket = secrets.token_hex(8)
        with self._cond:
            self._tickets.add(ticket)
        return f"ws://127.0.0.1:{self.port}/link/?ticket={ticket}&app_id={self.app_id}"

    # ------------------------------------------------------------------ pushing envelopes

    def push(
        self,
        envelope_type: EnvelopeType | str,
        payload: Mapping[str, Any],
        *,
        envelope_id: str | None = None,
        accepts_response_payload: bool = False,
        retry_attempt: int = 0,
        retry_reason: str = "",
        timeout: float = 5,
    ) -> str:
        """Send an envelope to the newest open connection (waiting up to ``timeout`` for one); return its id."""
        envelope_id = envelope_id or f"env-{next(self._envelope_ids):06d}-{secrets.token_hex(4)}"
        envelope: JsonDict = {
            "envelope_id": envelope_id,
            "type": envelope_type,
            "payload": dict(payload),
            "accepts_response_payload": accepts_response_payload,
        }
        if envelope_type == "events_api":
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = retry_reason
        self.send_json(envelope, timeout=timeout)
        return envelope_id

    def push_event(self, body: Mapping[str, Any], **options: Any) -> str:
        """An Events API ``event_callback`` body, as Slack forwards it over Socket Mode."""
        return self.push("events_api", body, **options)

    def push_interactive(self, payload: Mapping[str, Any], **options: Any) -> str:
        """An interaction payload; Slack lets view submissions answer with a payload (``response_action``)."""
        options.setdefault("accepts_response_payload", payload.get("type") in {"view_submission", "block_suggestion"})
        return self.push("interactive", payload, **options)

    def push_command(self, fields: Mapping[str, str], **options: Any) -> str:
        """A slash command's fields; the ack may carry a response payload."""
        options.setdefault("accepts_response_payload", True)
        return self.push("slash_commands", fields, **options)

    def send_json(self, message: Mapping[str, Any], *, timeout: float = 5) -> None:
        """Send any JSON message (e.g. ``{"type": "disconnect", "reason": "refresh_requested"}``)."""
        self.wait_for_connection(timeout=timeout).send(_OP_TEXT, json.dumps(message).encode("utf-8"))

    def send_disconnect(self, reason: str = "refresh_requested") -> None:
        """Slack's warning that this connection is about to go: the client should open a new one."""
        self.send_json({"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}})

    def drop_connections(self, *, keep_newest: bool = False) -> None:
        """Close open connections' TCP streams abruptly (no close frame): all, or all but the newest."""
        with self._cond:
            connections = [c for c in self._connections if not c.closed]
        if keep_newest:
            connections = connections[:-1]
        for connection in connections:
            connection.shutdown()

    # ------------------------------------------------------------------ inspection

    def wait_for_connection(self, *, count: int = 1, timeout: float = 5) -> _Connection:
        """The newest open connection, once at least ``count`` connections were ever accepted."""

        def ready() -> _Connection | None:
            live = [c for c in self._connections if not c.closed]
            return live[-1] if live and len(self._connections) >= count else None

        return self._wait_for(
            ready,
            timeout,
            lambda: f"socket mode connection #{count}; {len(self._connections)} accepted, {self._refused} refused",
        )

    @property
    def connection_count(self) -> int:
        """Connections accepted so far (open or closed)."""
        with self._cond:
            return len(self._connections)

    @property
    def open_connections(self) -> int:
        with self._cond:
            return sum(1 for c in self._connections if not c.closed)

    @property
    def refused(self) -> int:
        """Handshakes refused (bad request or unknown ticket)."""
        with self._cond:
            return self._refused

    def acks(self) -> list[Ack]:
        """Every ack received, oldest first."""
        with self._cond:
            return list(self._acks)

    def messages(self) -> list[JsonDict]:
        """Every JSON text message the clients sent (acks included), oldest first."""
        with self._cond:
            return list(self._messages)

    def wait_for_ack(self, envelope_id: str, timeout: float = 5) -> Ack:
        """Block until the app acks ``envelope_id``; ``AssertionError`` after ``timeout`` seconds."""

        def find() -> Ack | None:
            return next((a for a in self._acks if a.envelope_id == envelope_id), None)

        return self._wait_for(
            find, timeout, lambda: f"the ack of {envelope_id}; acked: {[a.envelope_id for a in self._acks]}"
        )

    def _wait_for(self, find: Callable[[], _Found | None], timeout: float, waited_for: Callable[[], str]) -> _Found:
        """What ``find`` returns once it is not None; ``AssertionError`` naming ``waited_for()`` after ``timeout``."""
        with self._cond:
            if not self._cond.wait_for(lambda: find() is not None, timeout=timeout):
                raise AssertionError(f"timed out after {timeout}s waiting for {waited_for()}")
            found = find()
            assert found is not None
            return found

    # ------------------------------------------------------------------ server threads

    def _spawn(self, target: Callable[..., None], name: str, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._cond:
            self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        while not self._closing.is_set():
            listener = self._listener
            if listener is None:
                return
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # the listener was closed
            self._spawn(self._serve, "FakeSocketMode-conn", sock)

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(0.05)
        buffer = bytearray()
        try:
            connection = self._handshake(sock, buffer)
            if connection is None:
                return
            if self.send_hello:
                connection.send(_OP_TEXT, json.dumps(self._hello()).encode("utf-8"))
            self._read_frames(connection, buffer)
        except (_ClientGone, OSError):
            pass
        finally:
            with self._cond:
                for connection in self._connections:
                    if connection.sock is sock:
                        connection.closed = True
                self._cond.notify_all()
            with contextlib.suppress(OSError):
                sock.close()

    def _hello(self) -> JsonDict:
        return {
            "type": "hello",
            "num_connections": self.open_connections,
            "debug_info": {"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
            "connection_info": {"app_id": self.app_id},
        }

    def _recv_into(self, sock: socket.socket, buffer: bytearray) -> None:
        while True:
            if self._closing.is_set():
                raise _ClientGone
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                raise _ClientGone
            buffer.extend(chunk)
            return

    def _handshake(self, sock: socket.socket, buffer: bytearray) -> _Connection | None:
        while b"\r\n\r\n" not in buffer:
            if len(buffer) > _MAX_HANDSHAKE:
                self._refuse(sock, "431 Request Header Fields Too Large")
                return None
            self._recv_into(sock, buffer)
        head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
        buffer[:] = rest
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        method, _, target = request_line.partition(" ")
        target = target.rsplit(" ", 1)[0]
        split = urlsplit(target)
        ticket = (parse_qs(split.query).get("ticket") or [""])[0]
        key = headers.get("sec-websocket-key", "")
        if (
            method != "GET"
            or split.path.rstrip("/") != "/link"
            or headers.get("upgrade", "").lower() != "websocket"
            or "upgrade" not in headers.get("connection", "").lower()
            or headers.get("sec-websocket-version") != "13"
            or not key
        ):
            self._refuse(sock, "400 Bad Request")
            return None
        with self._cond:
            known = ticket in self._tickets
        if not known:
            self._refuse(sock, "401 Unauthorized")
            return None
        response = (
            "HTTP/1.1 101 Switching Protocols\r\n"
            "Upgrade: websocket\r\n"
            "Connection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept_key(key)}\r\n"
            "\r\n"
        )
        sock.sendall(response.encode("ascii"))
        connection = _Connection(sock=sock, ticket=ticket, number=next(self._numbers))
        with self._cond:
            self._connections.append(connection)
            self._cond.notify_all()
        return connection

    def _refuse(self, sock: socket.socket, status: str) -> None:
        with self._cond:
            self._refused += 1
            self._cond.notify_all()
        body = status.encode("ascii")
        with contextlib.suppress(OSError):
            sock.sendall(
                f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n".encode("ascii")
                + body
            )

    def _read_exactly(self, sock: socket.socket, buffer: bytearray, size: int) -> bytes:
        while len(buffer) < size:
            self._recv_into(sock, buffer)
        data = bytes(buffer[:size])
        del buffer[:size]
        return data

    def _read_frames(self, connection: _Connection, buffer: bytearray) -> None:
        sock = connection.sock
        fragments: list[bytes] = []
        while True:
            first, second = self._read_exactly(sock, buffer, 2)
            fin, opcode = first & 0x80, first & 0x0F
            masked, length = second & 0x80, second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", self._read_exactly(sock, buffer, 2))
            elif length == 127:
                (length,) = struct.unpack("!Q", self._read_exactly(sock, buffer, 8))
            key = self._read_exactly(sock, buffer, 4) if masked else b""
            data = self._read_exactly(sock, buffer, length)
            if masked:
                data = bytes(b ^ key[i % 4] for i, b in enumerate(data))
            if opcode == _OP_PING:
                connection.send(_OP_PONG, data)
            elif opcode == _OP_PONG:
                continue
            elif opcode == _OP_CLOSE:
                with contextlib.suppress(ConnectionError, OSError):
                    connection.send(_OP_CLOSE, data[:2])
                connection.shutdown()
                return
            elif opcode in {_OP_TEXT, _OP_BINARY, _OP_CONTINUATION}:
                fragments.append(data)
                if fin:
                    self._on_message(b"".join(fragments))
                    fragments = []

    def _on_message(self, data: bytes) -> None:
        try:
            message = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            message = {"_raw": data}
        if not isinstance(message, dict):
            message = {"_raw": message}
        with self._cond:
            self._messages.append(message)
            envelope_id = message.get("envelope_id")
            if isinstance(envelope_id, str):
                payload = message.get("payload")
                self._acks.append(
                    Ack(envelope_id, payload if isinstance(payload, dict) else None, message, time.monotonic())
                )
            self._cond.notify_all()

    def __repr__(self) -> str:
        where = f"127.0.0.1:{self.port}" if self._listener is not None else "stopped"
        return f"<FakeSocketModeServer {where} connections={self.connection_count} acks={len(self._acks)}>"
