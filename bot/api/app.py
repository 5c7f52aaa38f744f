"""The HTTP API under ``/v1/``: any agent, in any language, asks for a sign-off and gets the decision back.

Served by the web process next to ``/slack/events`` (``bot.slack.edge.http`` mounts it). Routes (``ROUTES``;
the OpenAPI document at ``/v1/openapi.json`` describes exactly these, and a test holds them equal):

    POST /v1/approvals                  ask (201; 200 when the idempotency key names an earlier request)
    GET  /v1/approvals/{id}[?wait=30s]  read it; with ``wait``, once decided or after that long (at most 60 s);
                                        429 at once when the process holds ``API_MAX_WAITS`` waits already
    POST /v1/approvals/{id}/cancel      withdraw it while pending (409 once decided)
    POST /v1/questions                  ask a person a question (words, options or a form); then the same two
    GET  /v1/questions/{id}[?wait=30s]  routes as an approval's (a question's id under /v1/approvals/ is not found,
    POST /v1/questions/{id}/cancel      and the other way round)
    POST /v1/hooks/claude-code          Claude Code's http hook (PreToolUse, PermissionRequest): asked, held until
                                        decided or ``wait`` passed (then withdrawn), answered as the hook's output

Every route but the document needs ``Authorization: Bearer <API key>`` (``python -m bot api-key create``).
Bad input is a 4xx whose body names the field (``{"error": {"code", "message", "field"}}``) and changes
nothing; Redis unreachable is a 503 (nothing recorded, try again); never a 500 for anything a client sent.
"""

import json
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final, NoReturn, TypeVar
from urllib.parse import parse_qs

import redis
from pydantic import BaseModel, ValidationError

from bot.api import openapi
from bot.api.wait_slots import WaitSlots
from bot.domain.api_requests import ApprovalAsk, QuestionAsk, RequestKind
from bot.domain.claude_hooks import DEFAULT_WAIT_S, ClaudeHookInput, OnTimeout, wait_seconds
from bot.domain.errors import RefusedRequest
from bot.domain.slack_ids import CHANNEL_ID_PATTERN
from bot.flow.api_requests import MAX_WAIT_S, ApiRequests, AskProblem
from bot.flow.api_views import ApiRequestView
from bot.flow.claude_hooks import ClaudeCodeHooks, undecided_output
from bot.render.texts import claude_hooks as hook_texts
from bot.store.access.api_keys import ApiClient, ApiKeys

logger = logging.getLogger(__name__)

_Model = TypeVar("_Model", bound=BaseModel)
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
PREFIX: Final = "/v1/"
MAX_BODY_BYTES: Final = 1024 * 1024
_ID: Final = r"(?P<request_id>[^/]+)"
_WAIT: Final = re.compile(openapi.WAIT_PATTERN)
RETRY_AFTER_S: Final = 1
"""What a refused long-poll is told to wait before asking again (``Retry-After``): a wait ends within a minute."""


@dataclass(frozen=True)
class _Answer:
    status: int
    body: dict[str, Any]
    headers: tuple[tuple[str, str], ...] = ()


class _Refused(RefusedRequest):
    """A request answered with an error status (the message names the field, when one is at fault)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__(message, status=status)
        self.answer = _Answer(status, {"error": {"code": code, "message": message, "field": field}}, headers)


_Handler = Callable[[dict[str, Any], ApiClient, str], _Answer]
"""Answers one route: (the WSGI environ, the authenticated client, the request id in the path or "")."""

ROUTES: Final = (
    ("POST", "/v1/approvals"),
    ("GET", "/v1/approvals/{id}"),
    ("POST", "/v1/approvals/{id}/cancel"),
    ("POST", "/v1/questions"),
    ("GET", "/v1/questions/{id}"),
    ("POST", "/v1/questions/{id}/cancel"),
    ("POST", "/v1/hooks/claude-code"),
    ("GET", "/v1/openapi.json"),
)
_PATTERNS: Final = {
    "/v1/approvals": re.compile(r"^/v1/approvals$"),
    "/v1/approvals/{id}": re.compile(rf"^/v1/approvals/{_ID}$"),
    "/v1/approvals/{id}/cancel": re.compile(rf"^/v1/approvals/{_ID}/cancel$"),
    "/v1/questions": re.compile(r"^/v1/questions$"),
    "/v1/questions/{id}": re.compile(rf"^/v1/questions/{_ID}$"),
    "/v1/questions/{id}/cancel": re.compile(rf"^/v1/questions/{_ID}/cancel$"),
    "/v1/hooks/claude-code": re.compile(r"^/v1/hooks/claude-code$"),
    "/v1/openapi.json": re.compile(r"^/v1/openapi\.json$"),
}


def api_wsgi_app(*, requests: ApiRequests, api_keys: ApiKeys, waits: WaitSlots) -> WsgiApp:
    """The API as a WSGI application (mounted at ``/v1/``); ``waits`` bounds the long-polls and hook calls it holds."""
    hooks = ClaudeCodeHooks(requests=requests)
    handlers: dict[tuple[str, str], Callable[[dict[str, Any], ApiClient, str], _Answer]] = {
        ("POST", "/v1/approvals"): lambda environ, client, _id: _ask(requests, environ, client),
        ("GET", "/v1/approvals/{id}"): lambda environ, client, request_id: _read(
            requests, waits, environ, client, request_id
        ),
        ("POST", "/v1/approvals/{id}/cancel"): lambda _environ, client, request_id: _cancel(
            requests, client, request_id
        ),
        ("POST", "/v1/questions"): lambda environ, client, _id: _ask_question(requests, environ, client),
        ("GET", "/v1/questions/{id}"): lambda environ, client, request_id: _read(
            requests, waits, environ, client, request_id, kind="question"
        ),
        ("POST", "/v1/questions/{id}/cancel"): lambda _environ, client, request_id: _cancel(
            requests, client, request_id, kind="question"
        ),
        ("POST", "/v1/hooks/claude-code"): lambda environ, client, _id: _hook(hooks, waits, environ, client),
    }

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        try:
            answer = _route(environ, handlers, api_keys, lambda: openapi.document(requests.channel_routing()))
        except _Refused as refused:
            answer = refused.answer
        except redis.RedisError as error:
            logger.warning("API request not recorded, Redis unreachable: %s", error)
            answer = _Refused(503, "unavailable", "not recorded: storage unreachable, try again").answer
        except Exception:  # boundary: a bug, not the client's input: say so in the API's own shape, never an HTML page
            logger.exception("API request failed: %s %s", environ.get("REQUEST_METHOD"), environ.get("PATH_INFO"))
            answer = _Refused(500, "internal", "the request failed on the server; it is logged").answer
        data = json.dumps(answer.body, ensure_ascii=False).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data))), *answer.headers]
        start_response(f"{answer.status} {HTTPStatus(answer.status).phrase}", headers)
        return [data]

    return application


def _route(
    environ: dict[str, Any],
    handlers: dict[tuple[str, str], "_Handler"],
    api_keys: ApiKeys,
    document: Callable[[], dict[str, Any]],
) -> _Answer:
    path, method = str(environ.get("PATH_INFO", "")), str(environ.get("REQUEST_METHOD", ""))
    for route, pattern in _PATTERNS.items():
        matched = pattern.match(path)
        if matched is None:
            continue
        allowed = [verb for verb, known in ROUTES if known == route]
        if method not in allowed:
            listed = ", ".join(allowed)
            raise _Refused(
                405,
                "method_not_allowed",
                f"{method[:20]} is not allowed here (allowed: {listed})",
                headers=(("Allow", listed),),
            )
        if route == "/v1/openapi.json":
            return _Answer(200, document())
        client = _authenticate(environ, api_keys)
        return handlers[(method, route)](environ, client, matched.groupdict().get("request_id", ""))
    raise _Refused(404, "not_found", f"no such route: {path[:200]}")


_CHALLENGE: Final = (("WWW-Authenticate", "Bearer"),)


def _authenticate(environ: dict[str, Any], api_keys: ApiKeys) -> ApiClient:
    scheme, _, key = str(environ.get("HTTP_AUTHORIZATION", "")).partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        message = "an API key is required: Authorization: Bearer <key>"
        raise _Refused(401, "unauthorized", message, field="Authorization", headers=_CHALLENGE)
    client = api_keys.authenticate(key.strip())
    if client is None:
        raise _Refused(401, "unauthorized", "unknown or revoked API key", field="Authorization", headers=_CHALLENGE)
    return client


def _ask(requests: ApiRequests, environ: dict[str, Any], client: ApiClient) -> _Answer:
    ask = _parsed(ApprovalAsk, _json_body(environ))
    try:
        view, created = requests.ask(client, ask)
    except AskProblem as problem:
        raise _refused(problem) from None
    location = (("Location", f"{PREFIX}approvals/{view.stored.record.request_id}"),)
    return _Answer(201 if created else 200, view.to_json(), location)


def _ask_question(requests: ApiRequests, environ: dict[str, Any], client: ApiClient) -> _Answer:
    ask = _parsed(QuestionAsk, _json_body(environ))
    try:
        view, created = requests.ask_question(client, ask)
    except AskProblem as problem:
        raise _refused(problem) from None
    location = (("Location", f"{PREFIX}questions/{view.stored.record.request_id}"),)
    return _Answer(201 if created else 200, view.to_json(), location)


def _refused(problem: AskProblem) -> _Refused:
    code = "conflict" if problem.status == 409 else "invalid"
    return _Refused(problem.status, code, f"{problem.field}: {problem}", field=problem.field)


def _read(
    requests: ApiRequests,
    waits: WaitSlots,
    environ: dict[str, Any],
    client: ApiClient,
    request_id: str,
    *,
    kind: RequestKind = "approval",
) -> _Answer:
    query = parse_qs(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)
    unknown = sorted(set(query) - {"wait"})
    if unknown:
        raise _Refused(400, "invalid", f"{unknown[0]}: unknown query parameter (only 'wait')", field=unknown[0])
    seconds = _wait_seconds(query["wait"]) if "wait" in query else 0
    if seconds == 0:  # a plain read holds no thread: never refused
        return _Answer(200, _found(requests.find(client, request_id, kind=kind), request_id).to_json())
    with waits.held() as held:
        if held:
            view = requests.wait(client, request_id, timeout_s=seconds, kind=kind)
        else:
            view = _found(requests.find(client, request_id, kind=kind), request_id)
            if view.status == "pending":  # only a wait that would hold a thread is refused; a decision is given
                _refuse_wait(waits, client)
    return _Answer(200, _found(view, request_id).to_json())


def _refuse_wait(waits: WaitSlots, client: ApiClient) -> NoReturn:
    # Refused, not queued: a queued wait would hold the very thread the cap keeps for Slack.
    logger.warning(
        "long-poll of %s refused: this process holds %d already (API_MAX_WAITS); it is told to retry",
        client.name,
        waits.limit,
    )
    raise _Refused(
        429,
        "busy",
        f"wait: this server holds {waits.limit} long-polls already; retry after {RETRY_AFTER_S} s "
        "(or read without wait)",
        field="wait",
        headers=(("Retry-After", str(RETRY_AFTER_S)),),
    )


def _cancel(requests: ApiRequests, client: ApiClient, request_id: str, *, kind: RequestKind = "approval") -> _Answer:
    before = _found(requests.find(client, request_id, kind=kind), request_id)
    if before.status != "pending":
        raise _Refused(409, "already_decided", f"status: the request is {before.status} already", field="status")
    view = _found(requests.cancel(client, request_id, kind=kind), request_id)
    if view.status != "cancelled":  # a person decided it first
        raise _Refused(409, "already_decided", f"status: the request is {view.status} already", field="status")
    return _Answer(200, view.to_json())


_ON_TIMEOUT: Final[dict[str, OnTimeout]] = {"deny": "deny", "ask": "ask"}
_CHANNEL: Final = re.compile(CHANNEL_ID_PATTERN)


def _hook(hooks: ClaudeCodeHooks, waits: WaitSlots, environ: dict[str, Any], client: ApiClient) -> _Answer:
    wait_s, on_timeout, channel = _hook_query(str(environ.get("QUERY_STRING", "")))
    hook = _parsed(ClaudeHookInput, _json_body(environ))
    with waits.held() as held:
        if not held:  # answered at once, nothing asked: a request nobody waits for would only be withdrawn
            logger.warning("hook call of %s refused: this process holds %d waits already", client.name, waits.limit)
            busy = hook_texts.too_busy(waits.limit, ask=on_timeout == "ask")
            return _Answer(200, undecided_output(hook.hook_event_name, busy, on_timeout))
        try:
            output = hooks.answer(client, hook, channel=channel, wait_s=wait_s, on_timeout=on_timeout)
        except AskProblem as problem:
            raise _refused(problem) from None
    return _Answer(200, output)


def _hook_query(query_string: str) -> tuple[int, OnTimeout, str | None]:
    """``wait``, ``on_timeout`` and ``channel`` of a hook's URL (the settings file holds them)."""
    query = {name: values[-1] for name, values in parse_qs(query_string, keep_blank_values=True).items()}
    unknown = sorted(set(query) - {"wait", "on_timeout", "channel"})
    if unknown:
        message = f"{unknown[0]}: unknown query parameter (only wait, on_timeout, channel)"
        raise _Refused(400, "invalid", message, field=unknown[0])
    wait_s = wait_seconds(query["wait"]) if "wait" in query else DEFAULT_WAIT_S
    if wait_s is None:
        raise _Refused(400, "invalid", f"wait: {query['wait'][:40]!r} is not 1 to 590 seconds", field="wait")
    on_timeout = _ON_TIMEOUT.get(query.get("on_timeout", "deny"))
    if on_timeout is None:
        message = f"on_timeout: {query['on_timeout'][:40]!r} is neither deny nor ask"
        raise _Refused(400, "invalid", message, field="on_timeout")
    channel = query.get("channel")
    if channel is not None and not _CHANNEL.fullmatch(channel):
        raise _Refused(400, "invalid", f"channel: {channel[:40]!r} is not a Slack channel id", field="channel")
    return wait_s, on_timeout, channel


def _found(view: ApiRequestView | None, request_id: str) -> ApiRequestView:
    if view is None:
        raise _Refused(404, "not_found", f"id: no request {request_id[:40]!r} for this API key", field="id")
    return view


def _wait_seconds(values: list[str]) -> int:
    value = values[-1]
    if not _WAIT.fullmatch(value):
        message = f"wait: {value[:40]!r} is not a wait of 0 to {MAX_WAIT_S} s (like 30s, 45 or 1m)"
        raise _Refused(400, "invalid", message, field="wait")
    return 60 * int(value[:-1]) if value.endswith("m") else int(value.removesuffix("s"))


def _json_body(environ: dict[str, Any]) -> Any:
    declared = str(environ.get("CONTENT_LENGTH") or "").strip()
    if not declared:
        raise _Refused(411, "length_required", "Content-Length is required", field="Content-Length")
    if not declared.isascii() or not declared.isdigit():
        raise _Refused(400, "invalid", "Content-Length: not a number", field="Content-Length")
    if int(declared) > MAX_BODY_BYTES:
        raise _Refused(413, "too_large", "body: over 1 MiB", field="body")
    content_type = str(environ.get("CONTENT_TYPE") or "application/json").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise _Refused(415, "unsupported_media_type", "Content-Type: must be application/json", field="Content-Type")
    try:
        return json.loads(environ["wsgi.input"].read(int(declared)), parse_constant=_not_json)
    except TimeoutError:
        raise _Refused(408, "timeout", "body: did not arrive in time", field="body") from None
    except (ValueError, RecursionError) as error:  # not UTF-8, not JSON, NaN, nested beyond reason
        raise _Refused(400, "invalid", f"body: not JSON ({str(error)[:100]})", field="body") from None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def _parsed(model: type[_Model], body: Any) -> _Model:
    if not isinstance(body, dict):
        raise _Refused(422, "invalid", "body: must be a JSON object", field="body")
    try:
        return model.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]).lstrip(".")
        field = field or "body"
        raise _Refused(422, "invalid", f"{field}: {first['msg']}", field=field) from None
