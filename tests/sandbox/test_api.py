"""The sandbox serves the bot's HTTP API at the page's address: a request made with curl's calls appears in the
sandbox channel, is decided on the page, and the decision comes back to the client."""

from collections.abc import Iterator

import httpx
import pytest

from bot.render import action_ids as ids
from bot.sandbox.people import CHANNEL
from bot.sandbox.run import running_sandbox
from bot.store.access.api_keys import new_key
from tests.sandbox.client import APPROVER, PageClient, buttons

KEY = new_key()


@pytest.fixture
def base(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "REDIS_URL", "APPROVAL_POLICY"):
        monkeypatch.delenv(name, raising=False)
    with running_sandbox(port=0, api_key=KEY) as slack:
        yield f"http://127.0.0.1:{slack.port}"


def test_a_request_made_through_the_api_appears_in_the_sandbox_channel_and_its_decision_returns(base: str) -> None:
    api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
    asked = api.post("/v1/approvals", json={"tool": "restart_service", "input": {"service": "checkout"}})
    assert asked.status_code == 201, asked.text
    assert asked.json()["channel"] == CHANNEL  # the sandbox policy routes API requests to its channel
    page = PageClient(base + "/")
    approval = page.wait_for(
        lambda: next((m for m in page.channel_messages() if ids.APPROVE_ACTION in buttons(m)), None)
    )
    assert "sandbox" in approval["text"]  # the API client that asked
    page.post("action", user=APPROVER, channel=CHANNEL, ts=approval["ts"], action_id=ids.APPROVE_ACTION)
    decided = api.get(f"/v1/approvals/{asked.json()['id']}", params={"wait": "20s"})
    assert decided.json()["status"] == "approved"
    assert decided.json()["decision"]["decided_by"] == APPROVER

    other = api.post("/v1/approvals", json={"tool": "rollback_deploy", "input": {"service": "checkout"}})
    cancelled = api.post(f"/v1/approvals/{other.json()['id']}/cancel")  # no body, as curl -X POST sends it
    assert cancelled.json()["status"] == "cancelled"
    assert httpx.get(f"{base}/v1/openapi.json").json()["openapi"] == "3.1.0"
    assert httpx.post(f"{base}/v1/approvals", json={"tool": "x"}).status_code == 401


def test_the_sandbox_hands_on_each_method_and_the_headers_a_client_needs(base: str) -> None:
    api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
    listing = api.get("/v1/approvals")  # the route takes POST only: the bot's own 405, not a guess at POST
    assert (listing.status_code, listing.headers["Allow"]) == (405, "POST")
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "QUERY"):
        answer = api.request(method, "/v1/approvals/0123456789abcdef01234567")
        assert (answer.status_code, answer.headers["Allow"], answer.json()["error"]["code"]) == (
            405,
            "GET",
            "method_not_allowed",
        ), method
    assert api.head("/v1/approvals/0123456789abcdef01234567").status_code == 405
    asked = api.post("/v1/approvals", json={"tool": "restart_service", "input": {}})
    assert asked.headers["Location"] == f"/v1/approvals/{asked.json()['id']}"
    unauthorized = httpx.get(f"{base}/v1/approvals/{asked.json()['id']}")
    assert (unauthorized.status_code, unauthorized.headers["WWW-Authenticate"]) == (401, "Bearer")


def test_the_sandbox_serves_the_bots_metrics_and_probes_and_the_page_links_them(base: str) -> None:
    page = httpx.get(base + "/", timeout=10).text
    assert 'href="/metrics"' in page
    assert 'href="/readyz"' in page
    before = httpx.get(base + "/metrics", timeout=10)
    assert before.status_code == 200
    assert before.headers["content-type"].startswith("text/plain")
    assert "signoff_outbox_depth" in before.text
    assert httpx.get(base + "/healthz", timeout=10).status_code == 200
    ready = httpx.get(base + "/readyz", timeout=10)
    assert ready.status_code == 200, ready.text
