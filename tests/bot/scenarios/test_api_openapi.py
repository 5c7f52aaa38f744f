"""The OpenAPI document is served and describes the implementation: its routes, and every answer it gives."""

import http.client
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import httpx
import jsonschema
import pytest
import redis

from bench.serving import free_port, wait_healthy
from bot.api import openapi
from bot.api.app import ROUTES
from bot.domain.api_requests import ChannelRouting
from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.services import connect_redis
from bot.slack.edge.http import guarded_wsgi_app, serve
from state import RedisServer
from tests.bot.support.api_client import DEPLOY, ApiCaller, api_caller, until_waits_held
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER, CHANNEL
from tests.outage import redis_stopped


@pytest.fixture
def document(bot: Bot) -> dict[str, Any]:
    served = httpx.get(f"{bot.url}/v1/openapi.json")  # no key needed
    assert served.status_code == 200
    assert served.headers["content-type"] == "application/json"
    return dict(served.json())


def _validator(document: dict[str, Any], ref: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": ref, "components": document["components"]})


def _check(document: dict[str, Any], method: str, route: str, answer: httpx.Response) -> tuple[str, str, str]:
    """``answer`` is one the document lists for the route, and its body matches the schema listed."""
    listed = document["paths"][route][method.lower()]["responses"]
    assert str(answer.status_code) in listed, f"{method} {route} answered {answer.status_code}, not documented"
    for header in listed[str(answer.status_code)].get("headers", {}):
        assert header in answer.headers, f"{method} {route} answered {answer.status_code} without {header}"
    content = listed[str(answer.status_code)].get("content")
    if content is not None:
        assert answer.headers["content-type"] == "application/json"
        _validator(document, content["application/json"]["schema"]["$ref"]).validate(answer.json())
    return method, route, str(answer.status_code)


def test_the_document_lists_exactly_the_routes_served(bot: Bot, document: dict[str, Any]) -> None:
    documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert documented == set(ROUTES)
    assert document == openapi.document(bot.services.api_requests.channel_routing())
    for schema in document["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)
    asks = _validator(document, "#/components/schemas/ApprovalAsk")
    body = document["paths"]["/v1/approvals"]["post"]["requestBody"]["content"]["application/json"]
    for example in body["examples"].values():
        asks.validate(example["value"])


def test_every_answer_matches_the_document(bot: Bot, document: dict[str, Any]) -> None:
    with api_caller(bot.services, bot.url) as api:
        created = api.ask(idempotency_key="doc")
        _check(document, "POST", "/v1/approvals", created)
        _check(document, "POST", "/v1/approvals", api.ask(idempotency_key="doc"))  # 200: the same request
        _check(document, "POST", "/v1/approvals", api.ask(idempotency_key="doc", tool="other"))  # 409
        _check(document, "POST", "/v1/approvals", api.ask(channel="nope"))  # 422
        _check(document, "POST", "/v1/approvals", ApiCaller(bot.url, None).ask())  # 401
        bot.drain()
        request_id = created.json()["id"]
        _check(document, "GET", "/v1/approvals/{id}", api.get(request_id))
        _check(document, "GET", "/v1/approvals/{id}", api.get(request_id, wait="soon"))  # 400
        _check(document, "GET", "/v1/approvals/{id}", api.get("f" * 24))  # 404
        bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
        decided = api.get(request_id, wait="1s")
        assert decided.json()["status"] == "approved"
        _check(document, "GET", "/v1/approvals/{id}", decided)
        _check(document, "POST", "/v1/approvals/{id}/cancel", api.cancel(request_id))  # 409
        pending = api.ask()
        bot.drain()
        _check(document, "POST", "/v1/approvals/{id}/cancel", api.cancel(pending.json()["id"]))  # 200


def test_the_documented_request_schema_accepts_and_refuses_what_the_api_does(document: dict[str, Any]) -> None:
    asks = _validator(document, "#/components/schemas/ApprovalAsk")
    asks.validate(DEPLOY)
    wrongs: list[dict[str, Any]] = [
        {**DEPLOY, "surprise": 1},
        {**DEPLOY, "tool": 7},
        {"input": {}},
        {**DEPLOY, "input": []},
    ]
    for wrong in wrongs:
        assert not asks.is_valid(wrong), wrong


def _approval_of(bot: Bot, api: ApiCaller, request_id: str) -> str:
    """The approval id of the request's message (a button's value carries more: the version clicked)."""
    message_ts = api.get(request_id).json()["message_ts"]
    [index] = [index for index, message in enumerate(bot.approval_messages()) if message["ts"] == message_ts]
    return bot.approval_id(index)


def _raw_post(
    api: ApiCaller, content: bytes | Iterator[bytes], *, path: str = "/v1/approvals", **headers: str
) -> httpx.Response:
    return api.http.post(path, content=content, headers={"Content-Type": "application/json", **headers})


_HOOK: Final = "/v1/hooks/claude-code"
_HOOK_INPUT: Final = {
    "session_id": "s-1",
    "cwd": "/src",
    "hook_event_name": "PreToolUse",
    "tool_name": "restart_service",
    "tool_input": {"service": "checkout"},
    "tool_use_id": "toolu_1",
}


def _hook(api: ApiCaller, body: Any, **query: str) -> httpx.Response:
    return api.http.post(_HOOK, json=body, params={"channel": CHANNEL, "wait": "1", **query})


def _body_cut_short(bot: Bot, authorization: str, path: str = "/v1/approvals") -> httpx.Response:
    """A POST whose body stops arriving, to the bot served as ``serve`` serves it (a read times out)."""
    stop = threading.Event()
    port = free_port()
    application = guarded_wsgi_app(bot.services.settings, bot.services)
    server = threading.Thread(
        target=serve, args=(application,), kwargs={"port": port, "stop": stop, "host": "127.0.0.1"} | _SHORT_READS
    )
    server.start()
    try:
        wait_healthy(port)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.putrequest("POST", path)
        for name, value in (("Authorization", authorization), ("Content-Type", "application/json")):
            connection.putheader(name, value)
        connection.putheader("Content-Length", "100")
        connection.endheaders(b'{"tool": ')  # and nothing more
        answer = connection.getresponse()
        return httpx.Response(answer.status, headers=answer.getheaders(), content=answer.read())
    finally:
        stop.set()
        server.join(timeout=5)


def _hook_answers(bot: Bot, api: ApiCaller, anonymous: ApiCaller) -> list[httpx.Response]:
    """Every answer of the hook's route but 403 (several workspaces) and 503 (Redis down)."""
    return [
        _hook(api, _HOOK_INPUT),  # 200: nobody decided within the wait: withdrawn, denied
        _hook(api, {**_HOOK_INPUT, "tool_input": {}}),  # 409: the same tool use, another input
        _hook(api, _HOOK_INPUT, wait="1h"),  # 400
        _hook(anonymous, _HOOK_INPUT),  # 401
        _hook(api, {**_HOOK_INPUT, "tool_input": []}),  # 422
        _raw_post(api, iter([b"{}"]), path=_HOOK),  # 411
        _raw_post(api, b"x" * (1024 * 1024 + 1), path=_HOOK),  # 413
        _raw_post(api, b"{}", path=_HOOK, **{"Content-Type": "text/plain"}),  # 415
        _body_cut_short(bot, api.http.headers["Authorization"], _HOOK),  # 408
    ]


_SHORT_READS: Final = {"request_timeout_s": 0.5}


def test_every_documented_answer_but_a_server_error_is_given_and_matches(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    """Each (route, status) the document lists is answered for real and validated (a 500 is a bug: none)."""
    policy = tmp_path / "policy.yml"
    policy.write_text(
        "rules:\n  - {name: short, match: {tools: [restart_service]}, expiry: {after: 1m, outcome: deny}}\n"
    )
    clock = ManualClock()
    document = openapi.document(ChannelRouting(by_default=False, exceptions=()))
    seen: set[tuple[str, str, str]] = set()

    def check(method: str, route: str, answer: httpx.Response) -> None:
        seen.add(_check(document, method, route, answer))

    with (
        running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock, api_max_waits=1) as bot,
        api_caller(bot.services, bot.url) as api,
    ):
        check("GET", "/v1/openapi.json", httpx.get(f"{bot.url}/v1/openapi.json"))
        anonymous = ApiCaller(bot.url, None)
        check("POST", "/v1/approvals", anonymous.ask())  # 401
        asked = [api.ask(idempotency_key="one"), api.ask(), api.ask()]
        check("POST", "/v1/approvals", api.ask(idempotency_key="one"))  # 200: the same request
        check("POST", "/v1/approvals", api.ask(idempotency_key="one", tool="other"))  # 409
        for answer in asked:
            check("POST", "/v1/approvals", answer)
        bot.drain()
        expiring, denied, cancelled = (answer.json()["id"] for answer in asked)
        check("GET", "/v1/approvals/{id}", api.get(expiring, wait="1s"))  # still pending after the wait
        with ThreadPoolExecutor(1) as pool:
            holding = pool.submit(api.get, expiring, wait="2s")  # the one long-poll this process holds
            until_waits_held(bot.services, 1)
            check("GET", "/v1/approvals/{id}", api.get(denied, wait="1s"))  # 429, with Retry-After
            check("GET", "/v1/approvals/{id}", holding.result(timeout=10))
        check("GET", "/v1/approvals/{id}", api.get(expiring, wait="soon"))  # 400
        check("GET", "/v1/approvals/{id}", api.get("f" * 24))  # 404
        check("POST", "/v1/approvals", _raw_post(api, b"{"))  # 400
        check("POST", "/v1/approvals", _raw_post(api, iter([b"{}"])))  # 411: sent chunked, no Content-Length
        check("POST", "/v1/approvals", _raw_post(api, b"x" * (1024 * 1024 + 1)))  # 413
        check("POST", "/v1/approvals", _raw_post(api, b"{}", **{"Content-Type": "text/plain"}))  # 415
        check("POST", "/v1/approvals", api.ask(tool=7))  # 422
        check("POST", "/v1/approvals", _body_cut_short(bot, api.http.headers["Authorization"]))  # 408
        check("GET", "/v1/approvals/{id}", anonymous.get(denied))  # 401
        check("POST", "/v1/approvals/{id}/cancel", anonymous.cancel(denied))  # 401
        check("POST", "/v1/approvals/{id}/cancel", api.cancel("f" * 24))  # 404
        check("POST", "/v1/approvals/{id}/cancel", api.cancel(cancelled))  # 200
        check("GET", "/v1/approvals/{id}", api.get(cancelled))  # cancelled
        check("POST", "/v1/approvals/{id}/cancel", api.cancel(cancelled))  # 409
        bot.submit_deny(_approval_of(bot, api, denied), user=APPROVER, reason="not now")
        check("GET", "/v1/approvals/{id}", api.get(denied, wait="5s"))  # denied, with the reason
        seen |= _question_answers(document, bot, api, anonymous) | {
            _check(document, "POST", _HOOK, answer) for answer in _hook_answers(bot, api, anonymous)
        }
        clock.advance(61)
        bot.drain()
        expired = api.get(expiring)
        assert expired.json()["status"] == "expired"
        check("GET", "/v1/approvals/{id}", expired)
        assert {api.get(i).json()["status"] for i in (expiring, denied, cancelled)} == {
            "expired",
            "denied",
            "cancelled",
        }
    documented = {
        (method.upper(), route, status)
        for route, item in document["paths"].items()
        for method, operation in item.items()
        for status in operation["responses"]
    }
    unreached = (
        documented - seen - {(method, route, "500") for method, route in ROUTES} - _OUTAGE_STATUSES - _OAUTH_STATUSES
    )
    assert unreached == set(), f"documented but never answered in these tests: {sorted(unreached)}"


def _question_answers(
    document: dict[str, Any], bot: Bot, api: ApiCaller, anonymous: ApiCaller
) -> set[tuple[str, str, str]]:
    """Every answer of the question routes but 403 (several workspaces) and 503 (Redis down)."""
    asks, reads, cancels = "/v1/questions", "/v1/questions/{id}", "/v1/questions/{id}/cancel"
    answered = [
        (asks, anonymous.ask_question()),  # 401
        (asks, api.ask_question(idempotency_key="q")),  # 201
        (asks, api.ask_question(idempotency_key="q")),  # 200
        (asks, api.ask_question(idempotency_key="q", question="Another?")),  # 409
        (asks, api.ask_question(options=["a", "a"])),  # 422
        (asks, _raw_post(api, b"{", path=asks)),  # 400
        (asks, _raw_post(api, iter([b"{}"]), path=asks)),  # 411
        (asks, _raw_post(api, b"x" * (1024 * 1024 + 1), path=asks)),  # 413
        (asks, _raw_post(api, b"{}", path=asks, **{"Content-Type": "text/plain"})),  # 415
        (asks, _body_cut_short(bot, api.http.headers["Authorization"], asks)),  # 408
    ]
    question = answered[1][1].json()["id"]
    bot.drain()
    with ThreadPoolExecutor(1) as pool:
        holding = pool.submit(api.get_question, question, wait="2s")  # the one long-poll this process holds
        until_waits_held(bot.services, 1)
        answered.append((reads, api.get_question(question, wait="1s")))  # 429, with Retry-After
        answered.append((reads, holding.result(timeout=10)))  # 200, still pending
    answered += [
        (reads, api.get_question(question, wait="soon")),  # 400
        (reads, anonymous.get_question(question)),  # 401
        (reads, api.get_question("f" * 24)),  # 404
        (cancels, anonymous.cancel_question(question)),  # 401
        (cancels, api.cancel_question("f" * 24)),  # 404
        (cancels, api.cancel_question(question)),  # 200
        (cancels, api.cancel_question(question)),  # 409
        (reads, api.get_question(question)),  # cancelled
    ]
    method = {asks: "POST", reads: "GET", cancels: "POST"}
    return {_check(document, method[route], route, answer) for route, answer in answered}


_OAUTH_STATUSES = {("POST", "/v1/approvals", "403"), ("POST", "/v1/questions", "403"), ("POST", _HOOK, "403")}
"""Answered only by an app installed in several workspaces: ``test_workspaces`` gives it and checks it against the
document (``ApiConformance``)."""
_OUTAGE_STATUSES = {
    ("POST", "/v1/approvals", "503"),
    ("GET", "/v1/approvals/{id}", "503"),
    ("POST", "/v1/approvals/{id}/cancel", "503"),
    ("POST", "/v1/questions", "503"),
    ("GET", "/v1/questions/{id}", "503"),
    ("POST", "/v1/questions/{id}/cancel", "503"),
    ("POST", _HOOK, "503"),
}


@pytest.mark.single_redis  # it stops its own server
def test_while_redis_is_down_every_route_answers_the_documented_503(own_redis: RedisServer) -> None:
    document = openapi.document(ChannelRouting(by_default=False, exceptions=()))
    with (
        running_bot(connect_redis(own_redis.url, retry_s=0.3), agent_factory=demo_factory) as bot,
        api_caller(bot.services, bot.url) as api,
    ):
        request_id = api.ask().json()["id"]
        with redis_stopped(own_redis):
            for method, route, answer in (
                ("POST", "/v1/approvals", api.ask()),
                ("GET", "/v1/approvals/{id}", api.get(request_id)),
                ("POST", "/v1/approvals/{id}/cancel", api.cancel(request_id)),
                ("POST", "/v1/questions", api.ask_question()),
                ("GET", "/v1/questions/{id}", api.get_question(request_id)),
                ("POST", "/v1/questions/{id}/cancel", api.cancel_question(request_id)),
                ("POST", _HOOK, _hook(api, _HOOK_INPUT)),
            ):
                assert answer.status_code == 503, answer.text
                _check(document, method, route, answer)
        assert api.get(request_id).json()["status"] == "pending"
