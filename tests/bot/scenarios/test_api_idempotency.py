"""An idempotency key's retry over real HTTP: the same request sent again, however its client serializes it, gets
the first request back; only a request that asks something else conflicts."""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.bot.support.api_client import DEPLOY, ApiCaller, api_caller
from tests.bot.support.harness import Bot
from tests.bot.support.people import CHANNEL


@pytest.fixture
def api(bot: Bot) -> Iterator[ApiCaller]:
    with api_caller(bot.services, bot.url) as caller:
        yield caller


def _post(api: ApiCaller, path: str, body: dict[str, Any]) -> Any:
    # Sent as written: a client's JSON library chooses its objects' key order (Go sorts them, a dict keeps its own).
    return api.http.post(path, content=json.dumps(body), headers={"Content-Type": "application/json"})


def test_a_retry_whose_objects_list_their_keys_in_another_order_gets_the_first_request(
    bot: Bot, api: ApiCaller
) -> None:
    call = {"service": "checkout", "limits": {"cpu": "2", "memory": "1Gi"}, "replicas": 3}
    first = _post(api, "/v1/approvals", {**DEPLOY, "input": call, "idempotency_key": "deploy-7"})
    reordered = {"replicas": 3, "limits": {"memory": "1Gi", "cpu": "2"}, "service": "checkout"}
    fields_reordered = {"idempotency_key": "deploy-7", "input": reordered} | {
        k: v for k, v in DEPLOY.items() if k != "input"
    }
    again = _post(api, "/v1/approvals", fields_reordered)
    bot.drain()
    assert (first.status_code, again.status_code) == (201, 200), again.text
    assert again.json()["id"] == first.json()["id"]
    assert len(bot.approval_messages()) == 1

    other = _post(api, "/v1/approvals", {**DEPLOY, "input": {**call, "replicas": 4}, "idempotency_key": "deploy-7"})
    assert other.status_code == 409
    assert other.json()["error"]["field"] == "idempotency_key"


def test_a_question_retried_with_its_form_schema_written_in_another_order_gets_the_first_question(
    bot: Bot, api: ApiCaller
) -> None:
    properties = {"replicas": {"type": "integer", "minimum": 1}, "region": {"type": "string"}}
    schema = {"type": "object", "properties": properties, "required": ["region"]}
    body = {"question": "How should checkout deploy?", "schema": schema, "channel": CHANNEL, "idempotency_key": "q-7"}
    first = _post(api, "/v1/questions", body)
    written_otherwise = {
        "required": ["region"],
        "properties": {"region": {"type": "string"}, "replicas": {"minimum": 1, "type": "integer"}},
        "type": "object",
    }
    again = _post(api, "/v1/questions", {**body, "schema": written_otherwise})
    bot.drain()
    assert (first.status_code, again.status_code) == (201, 200), again.text
    assert again.json()["id"] == first.json()["id"]
