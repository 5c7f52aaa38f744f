"""The OpenAPI document is served and describes the implementation: its routes, and every answer it gives."""

from typing import Any

import httpx
import jsonschema
import pytest

from bot.api import openapi
from bot.api.app import ROUTES
from bot.render import action_ids as ids
from tests.bot.support.api_client import DEPLOY, ApiCaller, api_caller
from tests.bot.support.harness import APPROVER, Bot


@pytest.fixture
def document(bot: Bot) -> dict[str, Any]:
    served = httpx.get(f"{bot.url}/v1/openapi.json")  # no key needed
    assert served.status_code == 200
    assert served.headers["content-type"] == "application/json"
    return dict(served.json())


def _validator(document: dict[str, Any], ref: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": ref, "components": document["components"]})


def _check(document: dict[str, Any], method: str, route: str, answer: httpx.Response) -> None:
    """``answer`` is one the document lists for the route, and its body matches the schema listed."""
    listed = document["paths"][route][method.lower()]["responses"]
    assert str(answer.status_code) in listed, f"{method} {route} answered {answer.status_code}, not documented"
    schema = listed[str(answer.status_code)]["content"]["application/json"]["schema"]
    _validator(document, schema["$ref"]).validate(answer.json())


def test_the_document_lists_exactly_the_routes_served(document: dict[str, Any]) -> None:
    documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert documented == set(ROUTES)
    assert document == openapi.document()
    for schema in document["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)


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
