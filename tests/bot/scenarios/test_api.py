"""The HTTP API: a request made over real HTTP becomes the same approval message, and its decision,
clicked in the loopback Slack, goes back to the client waiting on it (long-poll) or to its callback."""

import hashlib
import hmac
import json
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import redis

from bot.api import openapi
from bot.domain.api_requests import ApiRequestRecord, ApprovalAsk, ChannelRouting, request_id_for
from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.render.texts import answers, approval_request
from bot.store import keys
from bot.store.approvals.api_requests import ApiRequestStore
from loopback_slack import slack_requests
from tests.bot.support.api_client import DEPLOY, ApiCaller, api_caller
from tests.bot.support.callbacks import callback_receiver
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, OUTSIDER, REQUESTER


@pytest.fixture
def api(bot: Bot) -> Iterator[ApiCaller]:
    with api_caller(bot.services, bot.url) as caller:
        yield caller


def _asked(bot: Bot, api: ApiCaller, **fields: Any) -> dict[str, Any]:
    response = api.ask(**fields)
    assert response.status_code == 201, response.text
    bot.drain()
    return dict(response.json())


def _message_of(bot: Bot, request: dict[str, Any]) -> dict[str, Any]:
    assert request["message_ts"] is not None, request
    return next(m for m in bot.approval_messages() if m["ts"] == request["message_ts"])


def test_a_request_becomes_an_approval_message_and_the_click_reaches_the_waiting_client(
    bot: Bot, api: ApiCaller
) -> None:
    asked = _asked(bot, api, reason="deploy 1.2.3 after the incident")
    shown = api.get(asked["id"]).json()
    assert shown["status"] == "pending"
    assert shown["policy"] == "default"
    message = _message_of(bot, shown)
    text = json.dumps(message["blocks"])
    assert "restart_service" in text
    assert "checkout" in text
    assert "ci-runner" in text  # the client that asked, shown on the message
    assert "deploy 1.2.3 after the incident" in text
    assert "thread_ts" not in message  # no thread given: a message of its own in the channel

    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(api.get, asked["id"], wait="30s")
        time.sleep(0.3)
        assert not waiting.done()  # still waiting: nobody decided
        approval_id = bot.approval_id(-1)
        assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
        answer = waiting.result(timeout=10)

    assert answer.status_code == 200
    decided = answer.json()
    assert decided["status"] == "approved"
    assert decided["decision"]["decision"] == "approve"
    assert decided["decision"]["decided_by"] == APPROVER
    bot.drain()
    assert is_decided(_message_of(bot, decided))
    events = [entry.event for entry in bot.services.stores.audit.entries()]
    assert "api_request" in events
    assert "decision" in events


def test_a_request_without_a_reason_shows_no_reason_box(bot: Bot, api: ApiCaller) -> None:
    message = _message_of(bot, api.get(_asked(bot, api)["id"]).json())
    texts = [json.dumps(block) for block in message["blocks"]]
    assert not any(approval_request.REASON_LABEL in text for text in texts)
    assert not any('\\"client\\"' in text or '\\"tool\\"' in text for text in texts)  # no JSON of ours


def test_a_request_with_a_reason_shows_it_as_written(bot: Bot, api: ApiCaller) -> None:
    message = _message_of(bot, api.get(_asked(bot, api, reason="deploy 1.2.3 after the incident")["id"]).json())
    [box] = [block["text"]["text"] for block in message["blocks"] if approval_request.REASON_LABEL in json.dumps(block)]
    assert box == f"{approval_request.REASON_LABEL}\ndeploy 1.2.3 after the incident"


def test_a_single_approval_names_its_approver_in_approved_by_a_denial_nobody(bot: Bot, api: ApiCaller) -> None:
    approved = _asked(bot, api)
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER).status == 200
    denied = _asked(bot, api, input={"service": "payments"})
    assert bot.submit_deny(bot.approval_id(-1), user=APPROVER, reason="not now").status == 200

    approval = api.get(approved["id"], wait="5s").json()["decision"]
    assert approval["decided_by"] == APPROVER
    assert approval["approved_by"] == [approval["decided_by"]]
    denial = api.get(denied["id"], wait="5s").json()["decision"]
    assert (denial["decided_by"], denial["approved_by"]) == (APPROVER, [])


def test_the_requester_cannot_approve_their_own_request_made_through_the_api(bot: Bot, api: ApiCaller) -> None:
    asked = _asked(bot, api)
    bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=REQUESTER)
    bot.drain()
    assert api.get(asked["id"]).json()["status"] == "pending"
    assert answers.self_approval_refused() in bot.ephemeral_texts(REQUESTER)


def test_a_deny_carries_its_reason_to_the_client(bot: Bot, api: ApiCaller) -> None:
    asked = _asked(bot, api)
    assert bot.submit_deny(bot.approval_id(-1), user=APPROVER, reason="not during the freeze").status == 200
    answer = api.get(asked["id"], wait="5s").json()
    assert answer["status"] == "denied"
    assert answer["decision"]["reason"] == "not during the freeze"
    assert answer["decision"]["decided_by"] == APPROVER


def test_an_idempotency_key_never_creates_a_second_message(bot: Bot, api: ApiCaller) -> None:
    first = api.ask(idempotency_key="deploy-4711")
    again = api.ask(idempotency_key="deploy-4711")
    bot.drain()
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert len(bot.approval_messages()) == 1

    other = api.ask(idempotency_key="deploy-4711", input={"service": "payments"})
    assert other.status_code == 409
    assert other.json()["error"]["field"] == "idempotency_key"
    bot.drain()
    assert len(bot.approval_messages()) == 1


@pytest.mark.parametrize("attempt", range(5))  # a race: several tries
def test_concurrent_retries_with_one_idempotency_key_post_one_message(bot: Bot, api: ApiCaller, attempt: int) -> None:
    start = threading.Barrier(8)

    def ask(_: int) -> Any:
        start.wait()
        return api.ask(idempotency_key="race")

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(ask, range(8)))
    bot.drain()
    assert sorted(answer.status_code for answer in answers) == [200] * 7 + [201]
    assert len({answer.json()["id"] for answer in answers}) == 1
    assert len(bot.approval_messages()) == 1
    assert len(bot.slack.calls("chat.postMessage")) == 1
    events = [entry.event for entry in bot.services.stores.audit.entries()]
    assert (events.count("api_request"), events.count("request")) == (1, 1)  # asked once, audited once


def test_cancel_withdraws_a_pending_request_and_its_message_shows_it(bot: Bot, api: ApiCaller) -> None:
    asked = _asked(bot, api)
    cancelled = api.cancel(asked["id"])
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    bot.drain()
    message = _message_of(bot, cancelled.json())
    assert is_decided(message)
    assert "withdrawn through the API by ci-runner" in json.dumps(message["blocks"])
    again = api.cancel(asked["id"])
    assert again.status_code == 409
    assert again.json()["error"]["field"] == "status"
    # A click on the withdrawn request changes nothing.
    bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
    assert api.get(asked["id"]).json()["status"] == "cancelled"


def test_a_decided_request_cannot_be_cancelled(bot: Bot, api: ApiCaller) -> None:
    asked = _asked(bot, api)
    bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
    answer = api.cancel(asked["id"])
    assert answer.status_code == 409
    assert api.get(asked["id"]).json()["status"] == "approved"


def test_keys_are_required_revocable_and_scoped_to_their_own_requests(bot: Bot, api: ApiCaller) -> None:
    asked = _asked(bot, api)
    anonymous = ApiCaller(bot.url, None)
    forged = ApiCaller(bot.url, "sk_signoff_not-a-key")
    assert anonymous.ask().status_code == 401
    assert forged.get(asked["id"]).status_code == 401
    assert anonymous.ask().json()["error"]["field"] == "Authorization"
    with api_caller(bot.services, bot.url, name="other-team") as other:
        assert other.get(asked["id"]).status_code == 404  # another client's request does not exist for it
        assert other.cancel(asked["id"]).status_code == 404
    assert bot.services.stores.api_keys.revoke("ci-runner")
    assert api.get(asked["id"]).status_code == 401
    assert api.ask().status_code == 401
    # The key is kept only as its digest.
    stored = bot.services.stores.redis.hgetall(keys.API_CLIENTS)
    assert b"sk_signoff_" not in repr(stored).encode()


BAD_BODIES = [
    ({"input": {}}, "tool"),
    ({**DEPLOY, "tool": ""}, "tool"),
    ({**DEPLOY, "tool": "two words"}, "tool"),
    ({**DEPLOY, "tool": 7}, "tool"),
    ({**DEPLOY, "input": ["not", "an", "object"]}, "input"),
    ({**DEPLOY, "input": {"nested": json.loads("[" * 40 + "]" * 40)}}, "input"),
    ({**DEPLOY, "channel": "general"}, "channel"),
    ({**DEPLOY, "requester": "bob"}, "requester"),
    ({**DEPLOY, "thread_ts": "yesterday"}, "thread_ts"),
    ({**DEPLOY, "callback_url": "file:///etc/passwd"}, "callback_url"),
    ({**DEPLOY, "idempotency_key": ""}, "idempotency_key"),
    ({**DEPLOY, "reason": "x" * 5000}, "reason"),
    ({**DEPLOY, "surprise": 1}, "surprise"),
    ({key: value for key, value in DEPLOY.items() if key != "channel"}, "channel"),  # nothing routes it
]


@pytest.mark.parametrize(("body", "field"), BAD_BODIES)
def test_bad_input_is_a_4xx_naming_the_field_and_changes_nothing(
    bot: Bot, api: ApiCaller, body: dict[str, Any], field: str
) -> None:
    before = bot.services.stores.redis.dbsize()
    answer = api.http.post("/v1/approvals", json=body)
    assert 400 <= answer.status_code < 500, answer.text
    assert answer.json()["error"]["field"] == field
    assert field in answer.json()["error"]["message"]
    bot.drain()
    assert bot.approval_messages() == []
    assert bot.services.stores.redis.dbsize() == before


JSON = "application/json"


@pytest.mark.parametrize(
    ("sent", "status", "field"),
    [
        ((b"{not json", JSON), 400, "body"),
        ((b"[" * 100_000, JSON), 400, "body"),
        ((b'{"tool": "t", "channel": "C0OPS", "input": {"x": ' + b"[" * 900 + b"]" * 900 + b"}}", JSON), 422, "input"),
        ((b'{"tool": NaN}', JSON), 400, "body"),
        ((b"\xff\xfe", JSON), 400, "body"),
        ((b'"a string"', JSON), 422, "body"),
        ((b"tool=x", "application/x-www-form-urlencoded"), 415, "Content-Type"),
        ((b"x" * (1024 * 1024 + 1), JSON), 413, "body"),
    ],
)
def test_malformed_bodies_are_refused_with_the_field(
    bot: Bot, api: ApiCaller, sent: tuple[bytes, str], status: int, field: str
) -> None:
    before = bot.services.stores.redis.dbsize()
    content, content_type = sent
    answer = api.http.post("/v1/approvals", content=content, headers={"Content-Type": content_type})
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["field"] == field
    assert bot.services.stores.redis.dbsize() == before


def test_bad_paths_methods_and_parameters_are_4xx(bot: Bot, api: ApiCaller) -> None:
    asked = _asked(bot, api)
    assert api.get("0" * 24).status_code == 404
    assert api.get("../../etc").status_code == 404
    assert api.http.get("/v1/nothing").status_code == 404
    assert api.http.delete(f"/v1/approvals/{asked['id']}").status_code == 405
    for wait, status in (("forever", 400), ("2h", 400), ("0", 200), ("1s", 200)):
        answer = api.get(asked["id"], wait=wait)
        assert answer.status_code == status, (wait, answer.text)
        if status == 400:
            assert answer.json()["error"]["field"] == "wait"
    assert api.http.get(f"/v1/approvals/{asked['id']}", params={"wiat": "1s"}).json()["error"]["field"] == "wiat"


def _policy_bot(redis_client: redis.Redis, tmp_path: Path, rules: str, clock: ManualClock | None = None) -> Any:
    policy = tmp_path / "policy.yml"
    policy.write_text("rules:\n" + textwrap.indent(textwrap.dedent(rules), "  "))
    return running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock)


def test_a_policy_rule_routes_a_request_that_names_no_channel(redis_client: redis.Redis, tmp_path: Path) -> None:
    rules = """\
    - name: deploys
      match: {tools: [restart_service]}
      channel: C0OPS
      quorum: 2
    """
    with _policy_bot(redis_client, tmp_path, rules) as bot, api_caller(bot.services, bot.url) as api:
        body = {key: value for key, value in DEPLOY.items() if key != "channel"}
        asked = api.ask(body)
        assert asked.status_code == 201, asked.text
        bot.drain()
        shown = api.get(asked.json()["id"]).json()
        assert (shown["channel"], shown["policy"], shown["quorum"]) == (CHANNEL, "deploys", 2)
        approval_id = bot.approval_id(-1)
        bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
        assert api.get(shown["id"]).json()["status"] == "pending"  # one vote of two
        assert api.get(shown["id"]).json()["votes"] == [APPROVER]
        bot.click(ids.APPROVE_ACTION, approval_id, user=OUTSIDER)
        decided = api.get(shown["id"]).json()
        assert decided["status"] == "approved"
        assert sorted(decided["decision"]["approved_by"]) == sorted([APPROVER, OUTSIDER])


def test_an_expiry_is_reported_as_expired(redis_client: redis.Redis, tmp_path: Path) -> None:
    rules = """\
    - name: deploys
      match: {tools: [restart_service]}
      expiry: {after: 1h, outcome: deny}
    """
    clock = ManualClock()
    with _policy_bot(redis_client, tmp_path, rules, clock) as bot, api_caller(bot.services, bot.url) as api:
        asked = _asked(bot, api)
        assert asked["expires_at"] == (clock.now + timedelta(hours=1)).isoformat()
        clock.advance(3601)
        bot.drain()
        answer = api.get(asked["id"]).json()
        assert answer["status"] == "expired"
        assert answer["decision"]["decision"] == "expired"
        assert answer["decision"]["decided_by"] is None


def test_the_callback_receives_the_decision_signed_with_the_clients_secret(bot: Bot, api: ApiCaller) -> None:
    secret = bot.services.stores.api_keys.get("ci-runner")
    assert secret is not None
    with callback_receiver(fail_first=True) as (url, receiver):
        asked = _asked(bot, api, callback_url=url)
        bot.submit_deny(bot.approval_id(-1), user=APPROVER, reason="wrong version")
        bot.drain()  # the worker finishes the request: the first delivery fails (503), the retry lands
        deadline = time.monotonic() + 10
        while not receiver.received and time.monotonic() < deadline:
            bot.worker.run_jobs_once(block_ms=100)
        assert len(receiver.received) == 1
    headers, body = receiver.received[0]
    timestamp = headers["X-Signoff-Request-Timestamp"]
    expected = hmac.new(
        secret.callback_secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256
    ).hexdigest()
    assert headers["X-Signoff-Signature"] == f"v0={expected}"
    assert abs(int(timestamp) - time.time()) < 60
    payload = json.loads(body)
    document = openapi.document(ChannelRouting(by_default=False, exceptions=()))
    approval = {"$ref": "#/components/schemas/Approval", "components": document["components"]}
    jsonschema.Draft202012Validator(approval).validate(payload)  # the body GET shows, as documented
    assert (payload["id"], payload["status"]) == (asked["id"], "denied")
    assert payload["decision"]["reason"] == "wrong version"
    assert "api_callback" in [entry.event for entry in bot.services.stores.audit.entries()]
    # The failed delivery is the client's to fix: nothing about it is posted in the channel (it is logged).
    assert [text for text in bot.texts_posted() if "error" in text or "agent" in text] == []


ROTATION = """\
rotations:
  primary: {members: [U0ONCALLA], shift: 1d, handoff: "09:00", timezone: UTC, starts: 2026-11-29}
"""
LADDER = """\
- name: deploys
  match: {tools: [restart_service]}
  approvers: {users: [U0APPROVER, U0SECOND, U0ONCALLA]}
  reminders: {every: 15m}
  escalation:
    levels:
      - after: 10m
        targets: {usergroups: [S0ONCALL]}
      - after: 20m
        targets: {rotation: primary}
    repeat: 0
"""


def test_an_api_request_is_reminded_and_escalated_under_its_message_until_decided(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(ROTATION + "rules:\n" + textwrap.indent(LADDER, "  "))
    clock = ManualClock()
    with (
        running_bot(
            redis_client,
            agent_factory=demo_factory,
            policy_path=policy,
            usergroups={"S0ONCALL": ["U0ONCALLA"]},
            clock=clock,
        ) as bot,
        api_caller(bot.services, bot.url) as api,
    ):
        asked = _asked(bot, api)
        message_ts = api.get(asked["id"]).json()["message_ts"]

        def later(minutes: int) -> list[dict[str, Any]]:
            before = len(bot.slack.calls("chat.postMessage"))
            clock.advance(minutes * 60)
            bot.drain()
            return [call.args for call in bot.slack.calls("chat.postMessage")[before:]]

        [first] = [post for post in later(10) if "Escalation" in post["text"]]
        assert "level 1" in first["text"]
        assert "<!subteam^S0ONCALL>" in first["text"]
        assert first["channel"] == CHANNEL
        assert first.get("thread_ts") == message_ts  # under the request's message, not loose in the channel
        posted = later(20)  # each level's wait counts from the one before
        [second] = [post for post in posted if "Escalation" in post["text"]]
        assert "level 2" in second["text"]
        assert "<@U0ONCALLA>" in second["text"]
        [reminder] = [post for post in posted if "Still waiting" in post["text"]]  # at 15 minutes
        assert reminder.get("thread_ts") == message_ts
        [dm] = [post for post in posted if post["channel"] == "U0ONCALLA"]  # the on-call person's copy
        assert "restart_service" in dm["text"]
        assert api.get(asked["id"]).json()["status"] == "pending"

        bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user="U0ONCALLA")
        assert api.get(asked["id"], wait="5s").json()["decision"]["decided_by"] == "U0ONCALLA"
        assert [post for post in later(120) if "Escalation" in post["text"] or "Still" in post["text"]] == []
        assert [e.event for e in bot.services.stores.audit.entries()].count("escalation") == 2


def test_every_audit_line_of_an_api_request_names_the_key_that_asked(bot: Bot, api: ApiCaller) -> None:
    with callback_receiver() as (url, receiver):
        approved = _asked(bot, api, callback_url=url)
        bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
        withdrawn = _asked(bot, api)
        assert api.cancel(withdrawn["id"]).status_code == 200
        bot.drain()
        assert receiver.arrived.wait(10)
    session_of = {f"api:{approved['id']}": "approved", f"api:{withdrawn['id']}": "withdrawn"}
    lines = [(session_of[e.session_id], e.event, e.actor, e.details) for e in bot.services.stores.audit.entries()]
    by_event = {(which, event): (actor, details) for which, event, actor, details in lines}
    for which in ("approved", "withdrawn"):
        actor, details = by_event[(which, "api_request")]
        assert actor == "api:ci-runner"
        assert details["tool"] == "restart_service"
        assert by_event[(which, "request")][1]["client"] == "ci-runner"  # the approval's own line too
    assert by_event[("approved", "decision")][0] == APPROVER
    assert by_event[("approved", "api_callback")][0] == "api:ci-runner"
    assert by_event[("withdrawn", "decision")][0] == "api:ci-runner"
    assert [event for _which, event, _actor, _details in lines].count("api_request") == 2


def test_a_request_kept_but_never_published_is_published_by_a_later_retry(redis_client: redis.Redis) -> None:
    clock = ManualClock()
    with (
        running_bot(redis_client, agent_factory=demo_factory, clock=clock) as bot,
        api_caller(bot.services, bot.url) as api,
    ):
        # The web process died between keeping the record and publishing its round.
        ask = ApprovalAsk.model_validate({**DEPLOY, "idempotency_key": "deploy-9"})
        record = ApiRequestRecord(
            request_id=request_id_for("ci-runner", "deploy-9"),
            client="ci-runner",
            ask=ask,
            team_id=slack_requests.TEAM_ID,
            channel_id=CHANNEL,
            created_at=clock.now,
        )
        assert ApiRequestStore(bot.services.stores.redis).create(record) is None
        soon = api.ask(idempotency_key="deploy-9")  # as if racing the first ask: left to it
        assert (soon.status_code, soon.json()["status"], soon.json()["message_ts"]) == (200, "pending", None)
        bot.drain()
        assert bot.approval_messages() == []
        clock.advance(31)
        later = api.ask(idempotency_key="deploy-9")
        assert (later.status_code, later.json()["id"]) == (200, record.request_id)
        bot.drain()
        assert len(bot.approval_messages()) == 1
        bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
        assert api.get(record.request_id, wait="5s").json()["status"] == "approved"


def test_concurrent_long_polls_each_get_their_own_requests_decision(redis_client: redis.Redis) -> None:
    with (
        running_bot(redis_client, agent_factory=demo_factory, api_max_waits=12) as bot,  # room for all twelve
        api_caller(bot.services, bot.url) as api,
    ):
        _twelve_long_polls_on_two_requests(bot, api)


def _twelve_long_polls_on_two_requests(bot: Bot, api: ApiCaller) -> None:
    first, second = _asked(bot, api), _asked(bot, api, input={"service": "payments"})
    first_approval, second_approval = bot.approval_id(-2), bot.approval_id(-1)
    with ThreadPoolExecutor(12) as pool:
        waiting = [pool.submit(api.get, request["id"], wait="30s") for request in (first, second) for _ in range(6)]
        time.sleep(0.5)
        assert not any(future.done() for future in waiting)  # twelve waits, none answered early
        bot.click(ids.APPROVE_ACTION, first_approval, user=APPROVER)
        answers = [future.result(timeout=10).json() for future in waiting[:6]]
        assert not any(future.done() for future in waiting[6:])  # the other request is still undecided
        bot.submit_deny(second_approval, user=APPROVER, reason="payments are frozen")
        others = [future.result(timeout=10).json() for future in waiting[6:]]
    assert {(a["id"], a["status"]) for a in answers} == {(first["id"], "approved")}
    assert {(a["id"], a["status"], a["decision"]["reason"]) for a in others} == {
        (second["id"], "denied", "payments are frozen")
    }


def test_a_request_asked_in_a_thread_is_posted_in_that_thread(bot: Bot, api: ApiCaller) -> None:
    thread = "1700000000.000100"
    asked = _asked(bot, api, thread_ts=thread)
    assert asked["thread_ts"] == thread
    message = _message_of(bot, api.get(asked["id"]).json())
    assert message["thread_ts"] == thread


def test_an_edited_request_answers_with_the_input_to_run_and_its_digest(bot: Bot, api: ApiCaller) -> None:
    asked = _asked(bot, api, reason="deploy 1.2.3 after the incident")
    approval_id = bot.approval_id(-1)
    view = bot.open_edit(approval_id, user=APPROVER)
    assert bot.submit_edit(view, user=APPROVER, changes={"service": "payments"}).status == 200
    bot.drain()

    decided = api.get(asked["id"]).json()

    edited = {"service": "payments"}  # DEPLOY asks for checkout
    assert decided["status"] == "approved"
    assert decided["input"] == DEPLOY["input"]  # what was asked stays what was asked
    assert decided["decision"]["updated_input"] == edited
    assert decided["decision"]["edited_by"] == APPROVER
    canonical = json.dumps(edited, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert decided["decision"]["input_digest"] == hashlib.sha256(canonical.encode()).hexdigest()
