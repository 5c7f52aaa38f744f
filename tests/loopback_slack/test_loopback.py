"""The Slack test doubles are faithful: slack_sdk's real WebClient parses FakeSlack's answers, and a real Bolt app
served over HTTP accepts TamperingPoster's correctly signed requests and rejects forged and stale ones."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from slack_bolt import Ack, App, Respond, Say
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler, ServerErrorRetryHandler

from loopback_slack import Reply, SlackError, WorkspaceState
from loopback_slack.slack_requests import (
    app_mention,
    block_actions,
    message_event,
    slash_command,
    url_verification,
    view_submission,
)
from tests.bot.support.fake_slack import Call, FakeSlack, ts_key
from tests.bot.support.http_server import serve_wsgi
from tests.bot.support.tampering import TamperingPoster

SECRET = "test-signing-secret"
BLOCKS: list[dict[str, Any]] = [
    {"type": "section", "block_id": "summary", "text": {"type": "mrkdwn", "text": "*restart* checkout?"}},
    {
        "type": "actions",
        "block_id": "decision",
        "elements": [
            {"type": "button", "action_id": "approve", "text": {"type": "plain_text", "text": "Approve"}, "value": "1"},
            {"type": "button", "action_id": "deny", "text": {"type": "plain_text", "text": "Deny"}, "value": "1"},
        ],
    },
]


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack(
        users={"U1": {"real_name": "Ada Lovelace", "tz": "Europe/London"}, "U2": {"name": "grace"}},
        usergroups={"S1": ["U1", "U2"]},
    ) as server:
        yield server


@pytest.fixture
def client(fake: FakeSlack) -> WebClient:
    return WebClient(token=fake.token, base_url=fake.url, timeout=5)


# ------------------------------------------------------------------------------------------- Web API shapes


def test_auth_test_identifies_the_bot(client: WebClient, fake: FakeSlack) -> None:
    response = client.auth_test()
    assert response["user_id"] == fake.identity.bot_user_id
    assert response["bot_id"] == fake.identity.bot_id
    assert response["team_id"] == fake.identity.team_id
    call = fake.calls("auth.test")[0]
    assert call.headers["authorization"] == f"Bearer {fake.token}"


def test_post_message_returns_increasing_ts_and_records_parsed_blocks(client: WebClient, fake: FakeSlack) -> None:
    first = client.chat_postMessage(channel="C1", text="approve?", blocks=BLOCKS)
    second = client.chat_postMessage(channel="C1", text="reply", thread_ts=first["ts"])

    assert first["ok"] is True
    assert first["channel"] == "C1"
    assert first["ts"] == "1700000000.000100"
    assert ts_key(second["ts"]) > ts_key(first["ts"])
    assert first["message"]["blocks"] == BLOCKS
    assert first["message"]["bot_id"] == fake.identity.bot_id
    assert second["message"]["thread_ts"] == first["ts"]
    assert fake.calls("chat.postMessage")[0].args["blocks"] == BLOCKS  # JSON body, parsed
    assert fake.calls("chat.postMessage")[0].headers["content-type"].startswith("application/json")


def test_blocks_as_a_json_string_in_a_form_field_are_parsed(client: WebClient, fake: FakeSlack) -> None:
    response = client.api_call("chat.postMessage", params={"channel": "C1", "blocks": json.dumps(BLOCKS)})

    assert response["ok"] is True
    call = fake.calls("chat.postMessage")[0]
    assert call.headers["content-type"] == "application/x-www-form-urlencoded"
    assert call.args["blocks"] == BLOCKS
    assert fake.message("C1", response["ts"])["blocks"] == BLOCKS


def test_messages_apply_chat_update(client: WebClient, fake: FakeSlack) -> None:
    posted = client.chat_postMessage(channel="C1", text="approve?", blocks=BLOCKS)
    client.chat_postMessage(channel="C1", text="in thread", thread_ts=posted["ts"])
    decided = [{"type": "section", "text": {"type": "mrkdwn", "text": "Approved by <@U1>"}}]

    updated = client.chat_update(channel="C1", ts=posted["ts"], text="approved", blocks=decided)
    client.chat_update(channel="C1", ts=posted["ts"], text="approved!")  # blocks left out: kept

    assert updated["ts"] == posted["ts"]
    assert updated["message"]["blocks"] == decided
    [parent, reply] = fake.messages("C1")
    assert parent["ts"] == posted["ts"]
    assert parent["text"] == "approved!"
    assert parent["blocks"] == decided
    assert parent["reply_count"] == 1
    assert reply["text"] == "in thread"
    assert [m["text"] for m in fake.messages("C1", thread_ts=posted["ts"])] == ["approved!", "in thread"]
    assert fake.messages("C2") == []
    with pytest.raises(SlackApiError) as missing:
        client.chat_update(channel="C1", ts="1.000000", text="x")
    assert missing.value.response["error"] == "message_not_found"


def test_post_ephemeral(client: WebClient, fake: FakeSlack) -> None:
    response = client.chat_postEphemeral(channel="C1", user="U1", text="only you", blocks=BLOCKS[:1])

    assert response["message_ts"]
    [ephemeral] = fake.ephemerals("U1")
    assert ephemeral["channel"] == "C1"
    assert ephemeral["blocks"] == BLOCKS[:1]
    assert fake.ephemerals("U2") == []
    assert fake.messages("C1") == []


def test_only_the_latest_calls_are_kept() -> None:
    with FakeSlack(kept_calls=3) as slack:
        client = WebClient(token=slack.token, base_url=slack.url, timeout=5)
        for number in range(5):
            client.chat_postMessage(channel="C1", text=f"message {number}")
        kept = [call.args["text"] for call in slack.calls("chat.postMessage")]
        assert kept == ["message 2", "message 3", "message 4"]
        assert len(slack.messages("C1")) == 5  # the workspace itself forgets nothing


def test_views_open_update_publish(client: WebClient, fake: FakeSlack) -> None:
    modal = {
        "type": "modal",
        "callback_id": "deny_reason",
        "private_metadata": "req-1",
        "title": {"type": "plain_text", "text": "Deny"},
        "blocks": [{"type": "input", "block_id": "reason", "element": {"type": "plain_text_input"}}],
    }
    opened = client.views_open(trigger_id="123.456", view=modal)
    view_id = opened["view"]["id"]
    assert opened["view"]["callback_id"] == "deny_reason"
    assert opened["view"]["private_metadata"] == "req-1"

    updated = client.views_update(view_id=view_id, hash=opened["view"]["hash"], view={**modal, "blocks": []})
    assert updated["view"]["id"] == view_id
    assert fake.view(view_id)["blocks"] == []
    with pytest.raises(SlackApiError) as conflict:
        client.views_update(view_id=view_id, hash=opened["view"]["hash"], view=modal)
    assert conflict.value.response["error"] == "hash_conflict"

    home = client.views_publish(user_id="U1", view={"type": "home", "blocks": BLOCKS[:1]})
    assert home["view"]["type"] == "home"
    home_view = fake.home_view("U1")
    assert home_view is not None
    assert home_view["blocks"] == BLOCKS[:1]
    assert fake.calls("views.open")[0].args["view"]["callback_id"] == "deny_reason"


def test_usergroups_and_users(client: WebClient, fake: FakeSlack) -> None:
    assert client.usergroups_users_list(usergroup="S1")["users"] == ["U1", "U2"]
    fake.set_usergroup("S1", ["U2"])
    assert client.usergroups_users_list(usergroup="S1")["users"] == ["U2"]
    with pytest.raises(SlackApiError) as unknown:
        client.usergroups_users_list(usergroup="S404")
    assert unknown.value.response["error"] == "no_such_subteam"

    ada = client.users_info(user="U1")["user"]
    assert (ada["real_name"], ada["tz"], ada["is_bot"]) == ("Ada Lovelace", "Europe/London", False)
    assert ada["tz_offset"] in {0, 3600}
    bot = client.users_info(user=fake.identity.bot_user_id)["user"]
    assert bot["is_bot"] is True
    with pytest.raises(SlackApiError) as missing:
        client.users_info(user="U404")
    assert missing.value.response["error"] == "user_not_found"


def test_permalink_dm_and_replies(client: WebClient, fake: FakeSlack) -> None:
    parent = client.chat_postMessage(channel="C1", text="approve?")
    fake.add_message("C1", user="U1", text="why?", thread_ts=parent["ts"])
    reply = client.chat_postMessage(channel="C1", text="because", thread_ts=parent["ts"])

    link = client.chat_getPermalink(channel="C1", message_ts=reply["ts"])["permalink"]
    assert link.endswith(f"?thread_ts={parent['ts']}&cid=C1")

    thread = client.conversations_replies(channel="C1", ts=parent["ts"])["messages"]
    assert [m["text"] for m in thread] == ["approve?", "why?", "because"]
    assert thread[0]["reply_count"] == 2

    opened = client.conversations_open(users="U1")
    assert opened["channel"]["id"] == fake.dm_channel("U1")
    dm = client.chat_postMessage(channel="U2", text="psst")
    assert dm["channel"] == fake.dm_channel("U2")
    assert [m["text"] for m in fake.messages(fake.dm_channel("U2"))] == ["psst"]


def test_metadata_is_returned_only_when_asked_and_history_pages_newest_first(
    client: WebClient, fake: FakeSlack
) -> None:
    marker = {"event_type": "signoff_outbox_entry", "event_payload": {"entry_id": "e1", "version": 2}}
    parent = client.chat_postMessage(channel="C1", text="top", metadata=marker)
    client.chat_postMessage(channel="C1", text="reply", thread_ts=parent["ts"], metadata=marker)
    client.chat_postMessage(channel="C1", text="later")

    plain = client.conversations_replies(channel="C1", ts=parent["ts"])["messages"]
    assert all("metadata" not in m for m in plain)
    rich = client.conversations_replies(channel="C1", ts=parent["ts"], include_all_metadata=True)["messages"]
    assert [m["metadata"] for m in rich] == [marker, marker]

    first = client.conversations_history(channel="C1", limit=1, include_all_metadata=True)
    assert [m["text"] for m in first["messages"]] == ["later"]  # newest first; the reply stays in its thread
    rest = client.conversations_history(channel="C1", cursor=first["response_metadata"]["next_cursor"], limit=5)
    assert [m["text"] for m in rest["messages"]] == ["top"]
    assert rest["has_more"] is False
    newer = client.conversations_history(channel="C1", oldest=parent["ts"])["messages"]
    assert [m["text"] for m in newer] == ["later"]
    with pytest.raises(SlackApiError) as bad:
        client.conversations_history(channel="C1", cursor="bogus")
    assert bad.value.response["error"] == "invalid_cursor"


# ------------------------------------------------------------------------------------------- auth and failures


def test_invalid_token_is_invalid_auth(fake: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as error:
        WebClient(token="xoxb-wrong", base_url=fake.url).chat_postMessage(channel="C1", text="x")
    assert error.value.response["error"] == "invalid_auth"
    with pytest.raises(SlackApiError) as missing:
        WebClient(base_url=fake.url).auth_test()
    assert missing.value.response["error"] == "not_authed"
    assert fake.messages("C1") == []


def test_an_org_installs_org_wide_and_its_token_speaks_in_each_of_its_workspaces(fake: FakeSlack) -> None:
    for team in ("T0ORGA", "T0ORGB"):
        fake.add_workspace(team, token=f"xoxb-{team}", channels={f"C{team}": ["U1"]})
    fake.add_org("E0ORG", token="xoxb-org", workspaces=["T0ORGA", "T0ORGB"], name="Grid Org")
    fake.offer_install("code-org", installer="U1", enterprise_id="E0ORG")
    access = WebClient(base_url=fake.url).oauth_v2_access(client_id="id", client_secret="secret", code="code-org")
    assert access["access_token"] == "xoxb-org"
    assert access["team"] is None
    assert access["enterprise"] == {"id": "E0ORG", "name": "Grid Org"}
    assert access["is_enterprise_install"] is True
    org = WebClient(token="xoxb-org", base_url=fake.url)
    who = org.auth_test()
    assert who["enterprise_id"] == "E0ORG"
    assert who["is_enterprise_install"] is True
    assert who["bot_id"] == "BE0ORG"
    org.chat_postMessage(channel="CT0ORGB", text="in B")  # the workspace that knows the channel
    assert [m["text"] for m in fake.messages("CT0ORGB", team="T0ORGB")] == ["in B"]
    assert fake.messages("CT0ORGB", team="T0ORGA") == []
    assert fake.token_of("E0ORG") == "xoxb-org"


def test_rate_limit_without_a_retry_handler_surfaces_429(client: WebClient, fake: FakeSlack) -> None:
    fake.fail_next("chat.postMessage", status=429, retry_after=7)

    with pytest.raises(SlackApiError) as error:
        client.chat_postMessage(channel="C1", text="x")

    assert error.value.response.status_code == 429
    assert error.value.response["error"] == "ratelimited"
    assert error.value.response.headers["Retry-After"] == "7"
    assert fake.messages("C1") == []
    assert client.chat_postMessage(channel="C1", text="x")["ok"] is True  # only the next call failed


def test_rate_limit_retry_handler_honours_retry_after(fake: FakeSlack) -> None:
    client = WebClient(token=fake.token, base_url=fake.url, retry_handlers=[RateLimitErrorRetryHandler(2)])
    fake.fail_next("chat.postMessage", status=429, retry_after=1)

    started = time.monotonic()
    response = client.chat_postMessage(channel="C1", text="x")

    assert response["ok"] is True
    [limited, accepted] = fake.calls("chat.postMessage")
    assert (limited.status, accepted.status) == (429, 200)
    assert accepted.at - limited.at >= 1.0
    assert time.monotonic() - started >= 1.0
    assert len(fake.messages("C1")) == 1


def test_server_errors_and_retry(fake: FakeSlack, client: WebClient) -> None:
    fake.fail_next("chat.update", status=500)
    with pytest.raises(SlackApiError) as error:
        client.chat_update(channel="C1", ts="1.0", text="x")
    assert error.value.response.status_code == 500

    retrying = WebClient(token=fake.token, base_url=fake.url, retry_handlers=[ServerErrorRetryHandler(3)])
    fake.fail_next("auth.test", status=503, times=2)
    assert retrying.auth_test()["ok"] is True
    assert [c.status for c in fake.calls("auth.test")] == [503, 503, 200]


def test_error_next_is_ok_false(client: WebClient, fake: FakeSlack) -> None:
    fake.error_next("chat.postMessage", "channel_not_found")

    with pytest.raises(SlackApiError) as error:
        client.chat_postMessage(channel="C1", text="x")

    assert error.value.response.status_code == 200
    assert error.value.response["error"] == "channel_not_found"
    assert fake.calls("chat.postMessage")[0].error == "channel_not_found"
    assert client.chat_postMessage(channel="C1", text="x")["ok"] is True


def test_slow_next_delays_the_answer_but_does_the_work(client: WebClient, fake: FakeSlack) -> None:
    fake.slow_next("chat.postMessage", 0.4)
    started = time.monotonic()
    client.chat_postMessage(channel="C1", text="slow")
    assert time.monotonic() - started >= 0.4

    impatient = WebClient(token=fake.token, base_url=fake.url, timeout=1, retry_handlers=[])
    fake.slow_next("chat.postMessage", 3)
    with pytest.raises(TimeoutError):
        impatient.chat_postMessage(channel="C1", text="timed out")
    assert [m["text"] for m in fake.messages("C1")] == ["slow", "timed out"]


def test_wait_for_wakes_on_a_call_from_another_thread(client: WebClient, fake: FakeSlack) -> None:
    def post_later() -> None:
        time.sleep(0.1)
        client.chat_postMessage(channel="C1", text="first")
        client.chat_postMessage(channel="C1", text="second")

    worker = threading.Thread(target=post_later)
    worker.start()
    calls = fake.wait_for("chat.postMessage", lambda c: c.args["channel"] == "C1", count=2, timeout=5)
    worker.join()

    assert [c.args["text"] for c in calls] == ["first", "second"]
    assert all(isinstance(c, Call) and c.ok for c in calls)
    started = time.monotonic()
    with pytest.raises(AssertionError, match="timed out"):
        fake.wait_for("views.open", timeout=0.2)
    assert time.monotonic() - started < 2


# ------------------------------------------------------------------------------------------- Bolt over HTTP


@dataclass
class BoltHarness:
    fake: FakeSlack
    poster: TamperingPoster
    seen: list[tuple[str, Any]] = field(default_factory=list)


@pytest.fixture
def bolt(fake: FakeSlack) -> Iterator[BoltHarness]:
    app = App(
        signing_secret=SECRET,
        client=WebClient(token=fake.token, base_url=fake.url),
        process_before_response=True,
    )
    seen: list[tuple[str, Any]] = []

    @app.action("approve")
    def approve(ack: Ack, body: dict[str, Any], client: WebClient, respond: Respond) -> None:
        ack()
        seen.append(("approve", body["actions"][0]["value"]))
        container = body["container"]
        client.chat_update(channel=container["channel_id"], ts=container["message_ts"], text="approved", blocks=[])
        respond(text="thanks", response_type="ephemeral", replace_original=False)

    @app.event("app_mention")
    def mention(event: dict[str, Any], say: Say) -> None:
        seen.append(("app_mention", event["text"]))
        say(text="on it", thread_ts=event.get("thread_ts") or event["ts"])

    @app.event("message")
    def message(event: dict[str, Any]) -> None:
        seen.append(("message", event.get("text")))

    @app.command("/signoff")
    def command(ack: Ack, command: dict[str, str]) -> None:
        ack(text=f"got {command['text']}")
        seen.append(("command", command["text"]))

    @app.view("deny_reason")
    def deny(ack: Ack, view: dict[str, Any]) -> None:
        ack()
        seen.append(("view", view["state"]["values"]["reason"]["text"]["value"]))

    with serve_wsgi(SlackRequestHandler(app)) as url, TamperingPoster(url, SECRET) as poster:
        yield BoltHarness(fake, poster, seen)


def test_bolt_accepts_a_signed_block_action_and_calls_the_fake(bolt: BoltHarness) -> None:
    fake = bolt.fake
    posted = WebClient(token=fake.token, base_url=fake.url).chat_postMessage(channel="C1", text="?", blocks=BLOCKS)
    payload = block_actions(
        action_id="approve",
        value="req-1",
        user_id="U1",
        channel_id="C1",
        message_ts=posted["ts"],
        block_id="decision",
        blocks=BLOCKS,
        response_url=fake.response_url("C1", posted["ts"]),
    )

    result = bolt.poster.post_action(payload)

    assert result.status == 200, result
    assert bolt.seen == [("approve", "req-1")]
    assert fake.message("C1", posted["ts"])["text"] == "approved"
    [responded] = fake.calls("response_url")
    assert responded.args["text"] == "thanks"


def test_bolt_accepts_signed_events_commands_and_views(bolt: BoltHarness) -> None:
    poster, fake = bolt.poster, bolt.fake

    assert poster.post_event(app_mention(user="U1", channel="C1", text="<@U0BOT> deploy")).status == 200
    assert poster.post_event(message_event(user="U1", channel="C1", text="yes", thread_ts="1.000001")).status == 200
    own = message_event(channel="C1", text="mine", user=fake.identity.bot_user_id, bot_id=fake.identity.bot_id)
    assert poster.post_event(own).status == 200  # acknowledged, but Bolt ignores its own bot's messages
    command = poster.post_command(slash_command(command="/signoff", text="status", user_id="U1", channel_id="C1"))
    values = {"reason": {"text": "release freeze"}}
    submitted = poster.post_view_submission(view_submission(callback_id="deny_reason", user_id="U1", values=values))
    challenge = poster.post_event(url_verification("abc"))

    assert (command.status, command.body) == (200, "got status")
    assert submitted.status == 200
    assert (challenge.status, challenge.json()) == (200, {"challenge": "abc"})
    assert bolt.seen == [
        ("app_mention", "<@U0BOT> deploy"),
        ("message", "yes"),
        ("command", "status"),
        ("view", "release freeze"),
    ]
    [said] = fake.calls("chat.postMessage")
    assert (said.args["channel"], said.args["text"]) == ("C1", "on it")


def test_bolt_rejects_forged_stale_and_unsigned_requests(bolt: BoltHarness) -> None:
    poster = bolt.poster
    event = app_mention(user="U1", channel="C1", text="<@U0BOT> deploy")
    payload = block_actions(action_id="approve", value="1", user_id="U1", channel_id="C1", message_ts="1.000001")
    fields = slash_command(command="/signoff", text="x", user_id="U1", channel_id="C1")

    for result in (
        poster.post_event(event, forge=True),
        poster.post_event(event, stale=True),
        poster.post_event(event, unsigned=True),
        poster.post_action(payload, forge=True),
        poster.post_action(payload, stale=True),
        poster.post_command(fields, forge=True),
        poster.post_command(fields, stale=True),
    ):
        assert result.status == 401, result
    assert bolt.seen == []
    assert bolt.fake.calls("chat.postMessage") == []


def test_replayed_and_malformed_requests(bolt: BoltHarness) -> None:
    poster = bolt.poster
    assert poster.post_event(message_event(user="U1", channel="C1", text="once")).status == 200

    # Signatures only bound the timestamp to five minutes: Bolt has no replay protection of its own.
    assert poster.replay().status == 200
    assert bolt.seen == [("message", "once"), ("message", "once")]

    # Bolt parses the body *before* it checks the signature, and a parse error escapes as an exception: the WSGI
    # server answers 500 whether or not the request was signed.
    for body, content_type in (
        (b'{"type": "event_callback", "event": ', "application/json"),
        (b"payload=%7Bnot-json", "application/x-www-form-urlencoded"),
    ):
        assert poster.post_raw(body, content_type).status == 500
        assert poster.post_raw(body, content_type, forge=True).status == 500
    assert bolt.seen == [("message", "once"), ("message", "once")]


def test_bolt_drops_a_command_whose_body_mentions_payload(bolt: BoltHarness) -> None:
    # Characterises Bolt 1.30's parse_body: any form body containing the substring "payload" is treated as an
    # interaction; without a payload field it parses to {}, so no listener matches and Bolt answers 404.
    fields = slash_command(command="/signoff", text="show payload", user_id="U1", channel_id="C1")

    assert bolt.poster.post_command(fields).status == 404
    assert bolt.seen == []


def test_the_extension_points_add_a_route_wrap_a_method_and_make_the_timestamps() -> None:
    stamps = iter(["1800000000.000001", "1800000000.000002"])
    with FakeSlack(timestamps=lambda: next(stamps)) as fake:
        fake.add_route("/page", lambda method, path, _h, _b: Reply.text(200, f"{method} page {path}"), exact=True)
        opened = fake.methods["views.open"]

        def refusing_modals_without_a_title(state: WorkspaceState, args: dict[str, Any]) -> dict[str, Any]:
            if not isinstance(args.get("view"), dict) or "title" not in args["view"]:
                raise SlackError("invalid_arguments")
            return opened(state, args)

        fake.methods["views.open"] = refusing_modals_without_a_title
        client = WebClient(token=fake.token, base_url=fake.url, timeout=5)

        with urllib.request.urlopen(f"http://127.0.0.1:{fake.port}/page?x=1", timeout=5) as page:
            assert page.read() == b"GET page /page?x=1"
        with pytest.raises(SlackApiError) as refused:
            client.views_open(trigger_id="t1", view={"type": "modal", "blocks": []})
        assert refused.value.response["error"] == "invalid_arguments"
        title = {"type": "plain_text", "text": "Deny"}
        assert client.views_open(trigger_id="t1", view={"type": "modal", "title": title, "blocks": []})["ok"]
        assert client.chat_postMessage(channel="C1", text="hi")["ts"] == "1800000000.000001"
        assert fake.add_message("C1", user="U1", text="yo")["ts"] == "1800000000.000002"
        assert [call.method for call in fake.calls()] == ["views.open", "views.open", "chat.postMessage"]
