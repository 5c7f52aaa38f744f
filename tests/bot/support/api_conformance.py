"""Every exchange on the HTTP API, held against the OpenAPI document the bot serves.

Wraps the bot's WSGI application in the test harness. Each answer under ``/v1/`` must be one the document
lists for its route and method (its status, required headers and body schema), or for a method the route does
not list, a 405 with ``Allow``. Each request a client sent is checked too: a client the tests drive (the MCP
server, the recipes) must send only what the document calls valid. The request body is seen as the
application reads it, never read ahead of it (a test may send a body that never arrives).
"""

import io
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import jsonschema

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _Tee(io.RawIOBase):
    """``wsgi.input`` as the application reads it, keeping a copy of what it read."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.read_so_far = bytearray()

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.source.read(size) if size is not None and size >= 0 else self.source.read()
        self.read_so_far += data
        return data

    def readable(self) -> bool:
        return True


def assert_documented_requests_only(api: "ApiConformance | None") -> None:
    """The clients a test drove sent something, and only what the document calls valid."""
    assert api is not None
    assert api.exchanges > 0, "no client called the HTTP API"
    assert api.invalid_requests == [], "a client sent what the OpenAPI document calls invalid"


@dataclass
class ApiConformance:
    """Checks exchanges against ``document()`` (the document as served); keeps what did not conform."""

    document: Callable[[], dict[str, Any]]
    outside_the_document: list[str] = field(default_factory=list)
    """Answers the document does not list: the server's fault."""
    invalid_requests: list[str] = field(default_factory=list)
    """Requests the document calls invalid: a client's fault (or a test sending them on purpose)."""
    exchanges: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wrap(self, application: WsgiApp) -> WsgiApp:
        """``application``, its ``/v1/`` exchanges checked."""

        def checked(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            if not str(environ.get("PATH_INFO", "")).startswith("/v1/"):
                return application(environ, start_response)
            tee = _Tee(environ["wsgi.input"])
            environ["wsgi.input"] = tee
            answered: list[Any] = []

            def recording_start(status: str, headers: list[tuple[str, str]], *args: Any) -> Any:
                answered[:] = [int(status.split(maxsplit=1)[0]), headers]
                return start_response(status, headers, *args)

            body = b"".join(application(environ, recording_start))
            self._check(environ, bytes(tee.read_so_far), answered[0], dict(answered[1]), body)
            return [body]

        return checked

    def _check(self, environ: dict[str, Any], sent: bytes, status: int, headers: dict[str, str], body: bytes) -> None:
        document = self.document()
        method, path = str(environ["REQUEST_METHOD"]), str(environ["PATH_INFO"])
        exchange = f"{method} {path[:80]} -> {status}"
        problems, mistakes = [], []
        route = _route_of(document, path)
        operation = None if route is None else document["paths"][route].get(method.lower())
        if route is None:
            if status != 404:
                problems.append("a path the document does not list is not answered 404")
        elif operation is None:
            allowed = {verb.upper() for verb in document["paths"][route]}
            if status != 405 or set(headers.get("Allow", "").replace(" ", "").split(",")) != allowed:
                problems.append(f"a method {route} does not list is not answered 405 with Allow: {sorted(allowed)}")
        else:
            problems += _answer_problems(document, operation, status, headers, body)
            mistakes += _request_mistakes(document, operation, environ=environ, sent=sent, path=path, route=route)
        if route is None or operation is None:
            mistakes.append("the document lists no such operation")
        with self._lock:
            self.exchanges += 1
            self.outside_the_document += [f"{exchange}: {problem}" for problem in problems]
            self.invalid_requests += [f"{exchange}: {mistake}" for mistake in mistakes]


def _route_of(document: dict[str, Any], path: str) -> str | None:
    for route in document["paths"]:
        pattern = "^" + re.sub(r"\\{[a-z_]+\\}", "[^/]+", re.escape(route)) + "$"
        if re.match(pattern, path):
            return str(route)
    return None


def _validator(document: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**schema, "components": document["components"]})


def _answer_problems(
    document: dict[str, Any], operation: dict[str, Any], status: int, headers: dict[str, str], body: bytes
) -> list[str]:
    listed = operation["responses"].get(str(status))
    if listed is None:
        return [f"status {status} is not documented"]
    problems = [f"no {name} header" for name in listed.get("headers", {}) if name not in headers]
    content = listed.get("content", {}).get("application/json")
    if content is not None:
        if headers.get("Content-Type") != "application/json":
            problems.append(f"Content-Type {headers.get('Content-Type')!r}")
        try:
            _validator(document, content["schema"]).validate(json.loads(body))
        except (ValueError, jsonschema.ValidationError) as error:
            problems.append(f"body: {str(error).splitlines()[0]}")
    return problems


def _request_mistakes(
    document: dict[str, Any], operation: dict[str, Any], *, environ: dict[str, Any], sent: bytes, path: str, route: str
) -> list[str]:
    mistakes = []
    query = parse_qs(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)
    parameters = {parameter["name"]: parameter for parameter in operation.get("parameters", [])}
    for name, values in query.items():
        if name not in parameters or parameters[name]["in"] != "query":
            mistakes.append(f"query parameter {name!r} is not documented")
        elif not _validator(document, parameters[name]["schema"]).is_valid(values[-1]):
            mistakes.append(f"query parameter {name}={values[-1]!r} does not match its schema")
    names = re.findall(r"\{([a-z_]+)\}", route)
    in_path = re.fullmatch(re.sub(r"\\{[a-z_]+\\}", "([^/]+)", re.escape(route)), path)
    for name, value in zip(names, in_path.groups() if in_path else (), strict=False):
        if not _validator(document, parameters[name]["schema"]).is_valid(value):
            mistakes.append(f"path parameter {name}={value[:40]!r} does not match its schema")
    body_schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body_schema is not None:
        try:
            _validator(document, body_schema).validate(json.loads(sent))
        except (ValueError, RecursionError, jsonschema.ValidationError) as error:
            mistakes.append(f"body: {str(error).splitlines()[0][:200]}")
    return mistakes
