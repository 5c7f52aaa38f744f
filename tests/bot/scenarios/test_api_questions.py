"""Questions asked over the HTTP API: posted as a question, answered with the question's own controls in the loopback
Slack, and the answer goes back to the client waiting on it (long-poll) or to its callback.

Before, the API asked approvals only: ``POST /v1/questions`` was not found.
"""

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

import pytest
import redis

from bot.domain.clock import ManualClock
from loopback_slack.slack_requests import PostResult
from tests.bot.support.api_client import REGION, ApiCaller, api_caller
from tests.bot.support.callbacks import callback_receiver
from tests.bot.support.choices import actions_of, click_option, send_chosen
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, OUTSIDER, REQUESTER, SECOND_APPROVER

FORM = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
        "note": {"type": "string"},
    },
    "required": ["replicas"],
}

CROSSED = {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 9, "maximum": 1}}}
"""A valid JSON Schema no answer fits: Slack refuses to open its form (a number field's min_value above max_value)."""


@pytest.fixture
def api(bot: Bot) -> Iterator[ApiCaller]:
    with api_caller(bot.services, bot.url) as caller:
        yield caller


def _asked(bot: Bot, api: ApiCaller, body: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    response = api.ask_question(body, **fields)
    assert response.status_code == 201, response.text
    assert response.headers["Location"] == f"/v1/questions/{response.json()['id']}"
    bot.drain()
    return dict(api.get_question(response.json()["id"]).json())  # posted by now: its message_ts known


def _message(bot: Bot, message_ts: str | None) -> dict[str, Any]:
    assert message_ts is not None
    return next(message for message in bot.approval_messages() if message["ts"] == message_ts)


def _answered(bot: Bot, message_ts: str | None) -> str:
    message = _message(bot, message_ts)
    assert is_decided(message)
    assert not [block for block in message["blocks"] if block["type"] == "actions"]  # no live controls left
    return json.dumps(message["blocks"], ensure_ascii=False)


def test_a_question_of_options_is_posted_as_a_question_and_the_click_reaches_the_waiting_client(
    bot: Bot, api: ApiCaller
) -> None:
    asked = _asked(bot, api)
    assert (asked["kind"], asked["status"], asked["name"], asked["multiple"]) == (
        "question",
        "pending",
        "question",
        False,
    )
    assert asked["options"] == [
        {"label": "eu-west-1", "description": None},
        {"label": "us-east-1", "description": None},
    ]
    shown = api.get_question(asked["id"]).json()
    message = _message(bot, shown["message_ts"])
    text = json.dumps(message["blocks"])
    assert "Question from ci-runner (API)" in text
    assert "Approval needed" not in text
    assert "Which region?" in text
    assert [element["text"]["text"] for element in actions_of(message)[:2]] == ["eu-west-1", "us-east-1"]

    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(api.get_question, asked["id"], wait="30s")
        time.sleep(0.3)
        assert not waiting.done()  # nobody answered yet
        assert click_option(bot, message, 1, user=REQUESTER).status == 200
        answer = waiting.result(timeout=10)

    assert answer.status_code == 200
    answered = answer.json()
    assert (answered["status"], answered["answer"], answered["answered_by"]) == ("answered", "us-east-1", REQUESTER)
    assert answered["answered_at"] is not None
    bot.drain()
    shown_answer = _answered(bot, shown["message_ts"])
    assert f"Answered by <@{REQUESTER}>" in shown_answer
    assert "us-east-1" in shown_answer
    bot.wait_told(REQUESTER, "Your answer to the question `Which region?` was sent to `ci-runner`.")
    events = [(entry.event, entry.details) for entry in bot.services.stores.audit.entries()]
    assert [details["question"] for event, details in events if event == "api_request"] == ["question"]
    assert [details["answer"] for event, details in events if event == "decision"] == ["us-east-1"]


def test_words_several_options_and_a_form_each_answer_in_their_own_shape(bot: Bot, api: ApiCaller) -> None:
    words = _asked(bot, api, {"question": "Anything to add?", "channel": CHANNEL, "requester": REQUESTER})
    assert bot.submit_answer(bot.approval_id(-1), user=REQUESTER, answer="  ship it\nafter lunch ").status == 200
    several = _asked(bot, api, options=["ops", "sre", {"label": "dev", "description": "the devs"}], multiple=True)
    assert send_chosen(bot, _message(bot, bot.approval_messages()[-1]["ts"]), ["2", "0"], user=REQUESTER).status == 200
    form = _asked(bot, api, {"question": "How?", "schema": FORM, "channel": CHANNEL, "requester": REQUESTER})
    view = bot.open_answer(bot.approval_id(-1), user=REQUESTER)
    assert bot.submit_answer_form(view, user=REQUESTER, changes={"replicas": "3"}).status == 200

    assert api.get_question(words["id"], wait="5s").json()["answer"] == "  ship it\nafter lunch "
    assert api.get_question(several["id"], wait="5s").json()["answer"] == ["ops", "dev"]
    answered_form = api.get_question(form["id"], wait="5s").json()
    assert (answered_form["answer"], answered_form["schema"]) == ({"replicas": 3}, FORM)
    bot.drain()
    for asked in (words, several, form):
        _answered(bot, api.get_question(asked["id"]).json()["message_ts"])


def test_a_question_is_not_an_approval_under_the_other_paths(bot: Bot, api: ApiCaller) -> None:
    question, approval = _asked(bot, api), api.ask().json()
    assert api.get(question["id"]).status_code == 404
    assert api.cancel(question["id"]).status_code == 404
    assert api.get_question(approval["id"]).status_code == 404
    assert api.cancel_question(approval["id"]).status_code == 404
    assert approval["kind"] == "approval"
    assert api.get_question(question["id"]).json()["status"] == "pending"


def test_an_idempotency_key_never_asks_twice_and_another_body_under_it_conflicts(bot: Bot, api: ApiCaller) -> None:
    first = api.ask_question(idempotency_key="region-7")
    again = api.ask_question(idempotency_key="region-7")
    other = api.ask_question(idempotency_key="region-7", question="Which zone?")
    approval = api.ask(idempotency_key="region-7")  # the same key of an approval names another request
    bot.drain()
    assert (first.status_code, again.status_code, other.status_code, approval.status_code) == (201, 200, 409, 201)
    assert first.json()["id"] == again.json()["id"] != approval.json()["id"]
    assert other.json()["error"]["field"] == "idempotency_key"
    assert len(bot.approval_messages()) == 2


BAD_QUESTIONS = [
    ({"options": ["a"]}, "question"),
    ({**REGION, "question": ""}, "question"),
    ({**REGION, "question": " \n\t"}, "question"),  # blank: it would ask nothing
    ({**REGION, "question": "x" * 4001}, "question"),
    ({**REGION, "options": []}, "options"),
    ({**REGION, "options": [f"o{index}" for index in range(101)]}, "options"),
    ({**REGION, "options": ["a", {"label": " "}]}, "options[1].label"),
    ({**REGION, "options": ["a", {"label": "b" * 76}]}, "options[1].label"),
    ({**REGION, "options": ["a" * 70 + "\u200bx", "a" * 70 + "\u200by"]}, "options[0].label"),  # cut, alike
    ({**REGION, "options": ["a", {"label": "b", "description": "d" * 76}]}, "options[1].description"),
    ({**REGION, "options": ["a", {"label": "b", "colour": "red"}]}, "options[1].colour"),
    ({**REGION, "options": ["a", 7]}, "options[1]"),
    ({**REGION, "options": ["a", "b", "a"]}, "options[2].label"),
    ({**REGION, "schema": FORM}, "schema"),  # options and a form
    ({"question": "q", "channel": CHANNEL, "multiple": True}, "multiple"),  # several of no options
    ({"question": "q", "channel": CHANNEL, "schema": {"type": "array"}}, "schema.type"),
    ({"question": "q", "channel": CHANNEL, "schema": {"type": "object", "properties": {}}}, "schema.properties"),
    ({"question": "q", "channel": CHANNEL, "schema": {"properties": {"a": {"type": 5}}}}, "schema.properties.a.type"),
    ({"question": "q", "channel": CHANNEL, "schema": CROSSED}, "schema.properties.replicas.minimum"),  # unanswerable
    ({**REGION, "name": "two words"}, "name"),
    ({**REGION, "channel": "general"}, "channel"),
    ({**REGION, "callback_url": "file:///etc/passwd"}, "callback_url"),
    ({**REGION, "tool": "restart_service"}, "tool"),
    ({key: value for key, value in REGION.items() if key != "channel"}, "channel"),  # nothing routes it
]


@pytest.mark.single_redis  # input checks: one server shows them
def test_bad_questions_are_422_naming_the_field_and_record_nothing(bot: Bot, api: ApiCaller) -> None:
    before = bot.services.stores.redis.dbsize()
    for body, field in BAD_QUESTIONS:
        answer = api.http.post("/v1/questions", json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["error"]["field"] == field, (body, answer.text)
        assert answer.json()["error"]["message"].startswith(f"{field}: "), answer.text
    bot.drain()
    assert bot.approval_messages() == []
    assert bot.services.stores.redis.dbsize() == before


def _policy_bot(redis_client: redis.Redis, tmp_path: Path, rules: str, clock: ManualClock | None = None) -> Any:
    policy = tmp_path / "policy.yml"
    policy.write_text("rules:\n" + textwrap.indent(textwrap.dedent(rules), "  "))
    return running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock)


def test_the_rules_deciders_answer_two_at_once_one_wins_and_the_other_is_told(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    rules = f"""\
    - name: release-questions
      match: {{interrupts: [release-region]}}
      approvers: {{users: [{APPROVER}, {SECOND_APPROVER}]}}
      channel: {CHANNEL}
    """
    with _policy_bot(redis_client, tmp_path, rules) as bot, api_caller(bot.services, bot.url) as api:
        body = {key: value for key, value in REGION.items() if key != "channel"}  # the rule routes it
        asked = _asked(bot, api, body, name="release-region")
        assert (asked["channel"], asked["policy"]) == (CHANNEL, "release-questions")
        message = _message(bot, asked["message_ts"])
        assert click_option(bot, message, 0, user=REQUESTER).status == 200  # the rule names who answers
        bot.wait_told(
            REQUESTER, f"This question is not for you: only <@{APPROVER}> or <@{SECOND_APPROVER}> may answer it."
        )
        results: list[PostResult] = []
        start = threading.Barrier(2)

        def answer(who: str, index: int) -> None:
            start.wait()
            results.append(click_option(bot, message, index, user=who))

        clicks = [threading.Thread(target=answer, args=each) for each in ((APPROVER, 0), (SECOND_APPROVER, 1))]
        for each in clicks:
            each.start()
        for each in clicks:
            each.join()
        answered = api.get_question(asked["id"], wait="5s").json()
        bot.drain()

        winner = answered["answered_by"]
        loser = SECOND_APPROVER if winner == APPROVER else APPROVER
        assert answered["answer"] == {APPROVER: "eu-west-1", SECOND_APPROVER: "us-east-1"}[winner]
        assert f"Answered by <@{winner}>" in _answered(bot, asked["message_ts"])
        assert [text for text in bot.ephemeral_texts(loser) if text.startswith(f"Already answered by <@{winner}>")]
        decisions = [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]
        assert len(decisions) == 1


def test_an_unanswered_question_expires_as_expired_and_a_denying_rule_refuses_one(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    rules = """\
    - name: quick-questions
      match: {interrupts: [question]}
      expiry: {after: 1h, outcome: deny}
    - name: no-polls
      match: {interrupts: [poll]}
      tier: deny
    """
    clock = ManualClock()
    with _policy_bot(redis_client, tmp_path, rules, clock) as bot, api_caller(bot.services, bot.url) as api:
        asked = _asked(bot, api)
        assert asked["expires_at"] == (clock.now + timedelta(hours=1)).isoformat()
        clock.advance(3601)
        bot.drain()
        expired = api.get_question(asked["id"]).json()
        assert (expired["status"], expired["answer"], expired["answered_by"]) == ("expired", None, None)
        assert "Nobody answered in time" in _answered(bot, asked["message_ts"])
        refused = _asked(bot, api, name="poll")
        assert (refused["status"], refused["policy"], refused["answer"]) == ("refused", "no-polls", None)
        assert "Refused by rule `no-polls`" in _answered(bot, refused["message_ts"])


def test_cancel_withdraws_a_pending_question_and_its_message_keeps_no_controls(bot: Bot, api: ApiCaller) -> None:
    asked = _asked(bot, api)
    stale = _message(bot, asked["message_ts"])
    cancelled = api.cancel_question(asked["id"])
    assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled")
    bot.drain()
    assert "withdrawn through the API by ci-runner" in _answered(bot, asked["message_ts"])
    again = api.cancel_question(asked["id"])
    assert (again.status_code, again.json()["error"]["field"]) == (409, "status")
    click_option(bot, stale, 0, user=REQUESTER)  # a stale click answers nothing
    assert api.get_question(asked["id"]).json()["status"] == "cancelled"


def test_the_callback_receives_the_answer_signed_with_the_clients_secret(bot: Bot, api: ApiCaller) -> None:
    client = bot.services.stores.api_keys.get("ci-runner")
    assert client is not None
    with callback_receiver() as (url, receiver):
        asked = _asked(bot, api, callback_url=url)
        click_option(bot, _message(bot, asked["message_ts"]), 0, user=REQUESTER)
        bot.drain()
        deadline = time.monotonic() + 10
        while not receiver.received and time.monotonic() < deadline:
            bot.worker.run_jobs_once(block_ms=100)
        assert len(receiver.received) == 1
    headers, body = receiver.received[0]
    timestamp = headers["X-Signoff-Request-Timestamp"]
    signed = hmac.new(client.callback_secret.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256)
    assert headers["X-Signoff-Signature"] == f"v0={signed.hexdigest()}"
    payload = json.loads(body)
    assert (payload["id"], payload["kind"], payload["status"], payload["answer"]) == (
        asked["id"],
        "question",
        "answered",
        "eu-west-1",
    )


def test_a_question_for_nobody_in_a_thread_is_answered_there_by_anyone_in_the_channel(bot: Bot, api: ApiCaller) -> None:
    thread = "1700000000.000100"
    asked = _asked(bot, api, {"question": "Who is on call?", "channel": CHANNEL, "thread_ts": thread})
    assert _message(bot, asked["message_ts"])["thread_ts"] == thread
    assert "replying in this thread" not in json.dumps(
        _message(bot, asked["message_ts"])["blocks"]
    )  # no agent reads it
    assert bot.submit_answer(bot.approval_id(-1), user=OUTSIDER, answer="Dana").status == 200
    assert api.get_question(asked["id"], wait="5s").json()["answer"] == "Dana"
    bot.drain()
    assert "Dana" in _answered(bot, asked["message_ts"])  # the answer, on the message in the thread


def test_a_forms_choices_show_their_hidden_characters_so_alike_looking_ones_are_told_apart(
    bot: Bot, api: ApiCaller
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "env": {"type": "string", "enum": ["prod", "prod\u200b"]},  # the second ends with a zero-width space
            "drop\u202e": {"type": "boolean"},  # a checkbox's own text is its property's name
        },
        "required": ["env"],
    }
    asked = _asked(bot, api, {"question": "Where?", "schema": schema, "channel": CHANNEL, "requester": REQUESTER})
    view = bot.open_answer(bot.approval_id(-1), user=REQUESTER)
    select, checkbox = (block["element"] for block in view["blocks"] if block["type"] == "input")
    assert [option["text"]["text"] for option in select["options"]] == ["prod", "prod⟨U+200B⟩"]
    assert [option["text"]["text"] for option in checkbox["options"]] == ["drop⟨U+202E⟩"]

    assert bot.submit_answer_form(view, user=REQUESTER, changes={"env": "prod\u200b"}).status == 200
    assert api.get_question(asked["id"], wait="5s").json()["answer"] == {"env": "prod\u200b", "drop\u202e": False}


def test_a_forms_choices_that_would_look_alike_once_cut_to_fit_are_typed_instead(bot: Bot, api: ApiCaller) -> None:
    alike = ["a" * 70 + "\u200bx", "a" * 70 + "\u200by"]  # spelled out, each is 79 long: cut to 75, the same
    schema = {"type": "object", "properties": {"pick": {"type": "string", "enum": alike}}, "required": ["pick"]}
    asked = _asked(bot, api, {"question": "Which?", "schema": schema, "channel": CHANNEL, "requester": REQUESTER})
    view = bot.open_answer(bot.approval_id(-1), user=REQUESTER)
    [field] = [block["element"] for block in view["blocks"] if block["type"] == "input"]
    assert field["type"] == "plain_text_input"  # not a select of two options that read the same
    assert bot.submit_answer_form(view, user=REQUESTER, changes={"pick": alike[1]}).status == 200
    assert api.get_question(asked["id"], wait="5s").json()["answer"] == {"pick": alike[1]}
