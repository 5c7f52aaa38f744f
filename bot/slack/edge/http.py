"""HTTP mode: the Bolt app as a WSGI application at ``/slack/events``.

Production runs it under gunicorn (see the Procfile: ``gunicorn 'bot.cli.web:create_wsgi()'``);
``python -m bot serve`` uses a small threaded server, enough for one team and for development.
"""

import json
import logging
import socketserver
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from slack_bolt import App
from slack_bolt.request import BoltRequest

from bot.flow.outcomes import Replay
from bot.observe.exposition import METRICS_PATH, WsgiApp, metrics_app
from bot.observe.probes import READY_PATH, readiness_app
from bot.observe.readiness import Readiness
from bot.settings import ConfigError, Settings
from bot.slack.app import build_app
from bot.slack.edge import outage
from bot.slack.edge.after_answer import ThenAfterTheAnswer, collected
from bot.slack.edge.clicks import ApproveClicks, approve_click
from bot.slack.edge.guard import MAX_BODY_BYTES, Rejection, RequestGuard, Unrecorded, read_request
from bot.slack.edge.payload_shape import payload_problem
from bot.slack.parts import SlackParts
from bot.store.scripts import EVERY_SCRIPT

logger = logging.getLogger(__name__)


def wsgi_app(
    app: App,
    *,
    guard: RequestGuard | None = None,
    clicks: ApproveClicks | None = None,
    path: str = "/slack/events",
    mounts: Mapping[str, WsgiApp] | None = None,
) -> WsgiApp:
    """Serve ``app`` at ``path`` (Events API, interactivity and slash commands share it).

    With ``guard`` (production), the guard is the one verifier (signature, replay) and the body is
    decoded once, here: Bolt gets the decoded request and does not verify again. Approve clicks
    go to ``clicks`` right after the signature check, before Bolt matches its listeners. Without a
    guard, Bolt verifies and decodes the body itself. ``/healthz`` answers ok (the process is alive: it
    asks nothing of Redis or Slack). ``mounts`` serve the other edges by path prefix (``/v1/``: the HTTP
    API; ``/readyz``: the readiness probe; ``/metrics``: Prometheus), each with its own checks.
    """

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        route = environ.get("PATH_INFO")
        if route == "/healthz":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
        if route != path or environ.get("REQUEST_METHOD") != "POST":
            return _answer(start_response, 404, {"error": "not found"})
        length = _content_length(environ)
        if isinstance(length, Rejection):
            return _DiscardBodyAfter(_answer(start_response, length.status, {"error": length.message}), environ)
        try:
            body = bytes(environ["wsgi.input"].read(length))
        except TimeoutError:
            return _answer(start_response, 408, {"error": "the request body did not arrive in time"})
        content_type = environ.get("CONTENT_TYPE", "")
        query = environ.get("QUERY_STRING", "")
        if guard is None:
            return _dispatch(
                app,
                start_response,
                BoltRequest(body=body.decode(errors="replace"), query=query, headers=_headers(environ)),
            )
        timestamp, signature = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP"), environ.get("HTTP_X_SLACK_SIGNATURE")
        rejection = guard.verify(body=body, timestamp=timestamp, signature=signature)
        if rejection is not None:
            return _answer(start_response, rejection.status, {"error": rejection.message})
        verified = _Verified(body, content_type, str(timestamp), str(signature), environ, query)
        with collected() as later:  # what a listener leaves until the answer has left (``after_answer``)
            answer = _serve_verified(app, guard, clicks, verified, start_response)
        return ThenAfterTheAnswer(answer, later) if later else answer

    if not mounts:
        return application
    edges = dict(mounts)

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        route = str(environ.get("PATH_INFO", ""))
        mounted = next((edge for prefix, edge in edges.items() if route.startswith(prefix)), application)
        return mounted(environ, start_response)

    return dispatch


@dataclass(frozen=True)
class _Verified:
    """A request whose signature the guard verified."""

    body: bytes
    content_type: str
    timestamp: str
    signature: str
    environ: dict[str, Any]
    query: str

    @property
    def headers(self) -> dict[str, str | Sequence[str]]:
        """Its headers, for Bolt (read only on its way there: an Approve click served at the edge needs none)."""
        return _headers(self.environ)


def _serve_verified(
    app: App,
    guard: RequestGuard,
    clicks: ApproveClicks | None,
    verified: _Verified,
    start_response: Callable[..., Any],
) -> Iterable[bytes]:
    """Decode the body once; serve an Approve click at once, anything else (not replayed, well formed) with Bolt."""
    request = read_request(verified.body.decode("utf-8", errors="replace"), verified.content_type)
    problem = request if isinstance(request, str) else payload_problem(request)
    if problem is None and clicks is not None and not isinstance(request, str):
        click = approve_click(request)
        if click is not None:
            replay = Replay(verified.signature, guard.remember_s(verified.timestamp))
            refused = clicks.serve(click, replay=replay)
            if isinstance(refused, Unrecorded):
                return _unrecorded(start_response, refused, verified.body, verified.content_type)
            if refused is not None:
                return _answer(start_response, refused.status, {"error": refused.message})
            start_response("200 OK", [("Content-Type", "text/plain;charset=utf-8"), ("Content-Length", "0")])
            return [b""]
    rejection = guard.remember(signature=verified.signature, timestamp=verified.timestamp)
    if isinstance(rejection, Unrecorded):
        return _unrecorded(start_response, rejection, verified.body, verified.content_type)
    if rejection is not None:
        return _answer(start_response, rejection.status, {"error": rejection.message})
    if isinstance(request, str) or problem is not None:
        return _answer(start_response, 400, {"error": problem})
    # Bolt takes an already decoded body only in its Socket Mode shape; that mode differs from HTTP only in
    # skipping Bolt's own request verification, which is off here anyway (the guard verified).
    decoded = BoltRequest(body=request, query=verified.query, headers=verified.headers, mode="socket_mode")
    return _dispatch(app, start_response, decoded)


def oauth_mounts(app: App) -> dict[str, WsgiApp]:
    """The install page and OAuth redirect of an OAuth-mode app (none for a single-token one).

    GETs a person's browser makes, with no Slack signature, so Bolt's OAuth flow checks them (the state, once, with its
    cookie).
    """
    flow = app.oauth_flow
    if flow is None:
        return {}
    handlers = {flow.install_path: flow.handle_installation, flow.redirect_uri_path: flow.handle_callback}

    def oauth_page(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        handle = handlers.get(str(environ.get("PATH_INFO", "")))
        if handle is None or environ.get("REQUEST_METHOD") != "GET":
            return _answer(start_response, 404, {"error": "not found"})
        request = BoltRequest(body="", query=environ.get("QUERY_STRING", ""), headers=_headers(environ))
        response = handle(request)
        status = f"{response.status} {HTTPStatus(response.status).phrase}"
        start_response(status, [(name, value) for name, values in response.headers.items() for value in values])
        return [response.body.encode() if isinstance(response.body, str) else response.body]

    return dict.fromkeys(handlers, oauth_page)


def _dispatch(app: App, start_response: Callable[..., Any], request: BoltRequest) -> Iterable[bytes]:
    try:
        response = app.dispatch(request)
    except (AttributeError, KeyError, IndexError, TypeError) as error:  # Bolt read a shape payload_problem missed
        logger.exception("Bolt could not read a verified request")
        return _answer(start_response, 400, {"error": f"malformed payload: {type(error).__name__} {error}"})
    status = f"{response.status} {HTTPStatus(response.status).phrase}"
    start_response(status, [(name, value) for name, values in response.headers.items() for value in values])
    return [response.body.encode() if isinstance(response.body, str) else response.body]


def _unrecorded(
    start_response: Callable[..., Any], rejection: Unrecorded, body: bytes, content_type: str
) -> Iterable[bytes]:
    logger.warning("request not recorded: %s", rejection.message)
    unrecorded = outage.answer(body, content_type)
    return _answer(start_response, unrecorded.status, unrecorded.body)


def _headers(environ: dict[str, Any]) -> dict[str, str | Sequence[str]]:
    headers: dict[str, str | Sequence[str]] = {
        name[5:].replace("_", "-").lower(): value for name, value in environ.items() if name.startswith("HTTP_")
    }
    for name in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(name):
            headers[name.replace("_", "-").lower()] = environ[name]
    return headers


def _answer(start_response: Callable[..., Any], status: int, payload: dict[str, Any] | None) -> Iterable[bytes]:
    data = json.dumps(payload).encode() if payload is not None else b""
    start_response(
        f"{status} {HTTPStatus(status).phrase}",
        [("Content-Type", "application/json"), ("Content-Length", str(len(data)))],
    )
    return [data]


def _content_length(environ: dict[str, Any]) -> int | Rejection:
    """The declared body length, or why the request is refused before any of its body is read.

    Without a valid length the body could only be read to its end (a negative one means that
    too), whatever its size: such requests are refused. Slack always sends the length.
    """
    declared = str(environ.get("CONTENT_LENGTH") or "").strip()
    if not declared:
        return Rejection(411, "Content-Length is required")
    if not declared.isascii() or not declared.isdigit():
        return Rejection(400, f"malformed Content-Length: {declared[:20]!r}")
    if int(declared) > MAX_BODY_BYTES:
        return Rejection(413, "request body too large")
    return int(declared)


# A refused body is read and dropped, up to this much, once the answer is sent: closing a socket
# with unread data resets it, and a client still sending would never see the answer.
_DISCARD_LIMIT_BYTES: Final = 8 * MAX_BODY_BYTES
_DISCARD_CHUNK_BYTES: Final = 64 * 1024


class _DiscardBodyAfter(list[bytes]):
    """The answer's chunks; closing it (the server does, once they are sent) drains the refused body.

    The drain is bounded in size and, by the server's socket timeout, in time; it never holds the
    body, and nothing waits for it before the answer leaves.
    """

    def __init__(self, chunks: Iterable[bytes], environ: dict[str, Any]) -> None:
        super().__init__(chunks)
        self._environ = environ

    def close(self) -> None:
        declared = str(self._environ.get("CONTENT_LENGTH") or "").strip()
        if not declared.isascii() or not declared.isdigit():
            return  # no length to trust: nothing is read
        remaining = min(int(declared), _DISCARD_LIMIT_BYTES)
        stream = self._environ["wsgi.input"]
        try:
            while remaining > 0:
                chunk = stream.read(min(remaining, _DISCARD_CHUNK_BYTES))
                if not chunk:
                    return
                remaining -= len(chunk)
        except (TimeoutError, ConnectionError):
            return  # the client stalled or left


def guarded_wsgi_app(settings: Settings, parts: SlackParts, *, token_verification: bool = True) -> WsgiApp:
    """The Slack app behind the request guard, Approve clicks served at the edge (what production serves)."""
    app = build_app(settings, parts, token_verification=token_verification, verified_at_edge=True)
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    guard = RequestGuard(signing_secret=secret, redis_client=parts.stores.redis)
    clicks = ApproveClicks(decisions=parts.decisions, outbox=parts.stores.outbox)
    one_token = None if settings.oauth else parts.slack
    readiness = Readiness(redis_client=parts.stores.redis, slack=one_token, scripts=EVERY_SCRIPT)
    edges = {**parts.http_mounts, **oauth_mounts(app)}
    probes = {READY_PATH: readiness_app(readiness), METRICS_PATH: metrics_app(parts.state_metrics)}
    if settings.metrics_port is None:
        return wsgi_app(app, guard=guard, clicks=clicks, mounts={**edges, **probes})
    return probes_apart(wsgi_app(app, guard=guard, clicks=clicks, mounts=edges), probes, port=settings.metrics_port)


def probes_apart(application: WsgiApp, probes: Mapping[str, WsgiApp], *, port: int) -> WsgiApp:
    """``application``, but a request that arrives on ``port`` gets only ``probes`` (by path prefix), else 404.

    ``port`` is the listener's own: gunicorn (on a TCP address) and ``serve`` set ``SERVER_PORT`` from the socket a
    request came in on, not from its ``Host`` header, so no client reaches one side through the other's port.
    """

    def application_or_probes(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("SERVER_PORT") != str(port):
            return application(environ, start_response)
        route = str(environ.get("PATH_INFO", ""))
        probe = next((edge for prefix, edge in probes.items() if route.startswith(prefix)), None)
        if probe is None:
            return _answer(start_response, 404, {"error": "not found"})
        return probe(environ, start_response)

    return application_or_probes


# A request must arrive whole within this time: one sent half way and left open must not hold
# a thread for ever. Slack sends each request at once and waits 3 seconds for the answer.
REQUEST_TIMEOUT_S: Final = 10


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], TimeoutError | ConnectionError):
            logger.info("client=<%s> | request not received in time or abandoned: dropped", client_address[0])
            return
        super().handle_error(request, client_address)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        logger.debug(format, *args)


def serve(
    application: WsgiApp,
    *,
    port: int,
    stop: threading.Event,
    host: str = "0.0.0.0",
    request_timeout_s: float = REQUEST_TIMEOUT_S,
) -> None:
    """Serve until ``stop`` is set; a connection silent for ``request_timeout_s`` is dropped.

    Raises:
        ConfigError: Nothing can listen on ``host``:``port`` (the address is unknown or taken).
    """
    server = listen(application, host=host, port=port, request_timeout_s=request_timeout_s)
    stop.wait()
    close(server)


def listen(
    application: WsgiApp,
    *,
    host: str,
    port: int,
    request_timeout_s: float = REQUEST_TIMEOUT_S,
    port_variable: str = "PORT",
) -> WSGIServer:
    """Serve ``application`` on ``host``:``port`` in a thread, until ``close``; ``port_variable`` names the setting.

    Raises:
        ConfigError: Nothing can listen on ``host``:``port`` (the address is unknown or taken).
    """
    try:
        handler = type("_TimedHandler", (_QuietHandler,), {"timeout": request_timeout_s})
        server = make_server(host, port, application, server_class=_ThreadingServer, handler_class=handler)
    except OSError as error:
        raise ConfigError(f"HOST, {port_variable}: cannot listen on {host}:{port} ({error})") from None
    logger.info("listening on http://%s:%d/", host, server.server_port)
    threading.Thread(target=server.serve_forever, name=f"http-{port}", daemon=True).start()
    return server


def close(server: WSGIServer) -> None:
    """Stop serving what ``listen`` started, and release the port."""
    server.shutdown()
    server.server_close()
