"""A click's path: one verifier at the edge, and an Approve click is one Redis round trip before its answer."""

import io
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import redis
from slack_bolt.middleware.request_verification import RequestVerification

from bench.round_trips import commands_sent
from bot.domain.workspaces import OneWorkspace
from bot.render import action_ids as ids
from bot.render import blocks
from bot.render.texts import answers
from bot.slack.app import build_app
from bot.slack.edge.http import guarded_wsgi_app, wsgi_app
from bot.store import keys
from bot.store.approvals.approval_record import Approval
from bot.store.workspaces.directory import Directory
from loopback_slack import slack_requests
from loopback_slack.slack_requests import SignedPoster
from tests.bot.support.agents import two_gates_agent
from tests.bot.support.api_client import api_caller
from tests.bot.support.choices import actions_of, click_option
from tests.bot.support.harness import SIGNING_SECRET, Bot, edit_form_state, message_click, running_bot
from tests.bot.support.http_server import serve_wsgi
from tests.bot.support.people import APPROVER, CHANNEL, CHANNEL_MEMBERS, REQUESTER, TEAM

SCENARIO_POLICY = Path(__file__).parents[1] / "support" / "policies" / "scenario.yml"
LEFT = "U0THIRD"  # in the channel (and the on-call group) when the caches were filled, gone since


def _approval(bot: Bot, approval_id: str) -> Approval:
    session_id = bot.services.stores.approvals.session_of(approval_id)
    assert session_id is not None
    approval = bot.services.stores.approvals.get(session_id, approval_id)
    assert approval is not None
    return approval


def _shard(bot: Bot, approval_id: str) -> int:
    session_id = bot.services.stores.approvals.session_of(approval_id)
    assert session_id is not None
    return keys.shard_of(session_id)


def _two_requests(bot: Bot) -> None:
    bot.mention("restart api and search")
    bot.drain()


@pytest.mark.single_redis  # counted with MONITOR, which watches one server (a cluster has one per master)
def test_an_approve_click_is_one_redis_round_trip_before_its_answer(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=two_gates_agent) as bot:
        _two_requests(bot)
        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER).status == 200  # caches now warm
        second = bot.approval_id(1)

        with commands_sent(bot.services.stores.redis) as commands:
            assert bot.click(ids.APPROVE_ACTION, second, user=APPROVER).status == 200

        assert [command.split()[0] for command in commands] == ["EVALSHA"]
        session_id = bot.services.stores.approvals.session_of(second)
        assert session_id is not None
        approval = bot.services.stores.approvals.get(session_id, second)
        assert approval is not None
        assert approval.decision is not None
        assert approval.decision.decided_by == APPROVER


@pytest.mark.single_redis  # counted with MONITOR, which watches one server (a cluster has one per master)
def test_an_approve_click_on_a_request_made_through_the_api_is_one_redis_round_trip(bot: Bot) -> None:
    with api_caller(bot.services, bot.url) as api:
        assert api.ask().status_code == 201
        assert api.ask(input={"service": "search"}).status_code == 201
    bot.drain()
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER).status == 200  # connections now open
    approval_id = bot.approval_id(1)
    directory = Directory(clients=OneWorkspace(bot.services.slack), redis_client=bot.services.stores.redis)
    assert directory.in_channel(TEAM, CHANNEL, APPROVER, shard=_shard(bot, approval_id))  # the shard's cache is warm

    with commands_sent(bot.services.stores.redis) as commands:
        assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200

    assert [command.split()[0] for command in commands] == ["EVALSHA"]  # its session id names no channel
    decision = _approval(bot, approval_id).decision
    assert decision is not None
    assert decision.decided_by == APPROVER


def test_a_replayed_approve_click_is_refused_and_changes_nothing(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
    shard = keys.shard_of(bot.services.stores.approvals.session_of(bot.approval_id()) or "")
    audit_before = bot.services.stores.redis.xlen(keys.audit(shard))
    outbox_before = bot.services.stores.redis.hlen(keys.outbox_entries(shard))

    assert bot.poster.replay().status == 409

    assert bot.services.stores.redis.xlen(keys.audit(shard)) == audit_before
    assert bot.services.stores.redis.hlen(keys.outbox_entries(shard)) == outbox_before


def test_a_replayed_refused_click_is_refused_as_a_replay(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    requester_click = bot.click(ids.APPROVE_ACTION, bot.approval_id(), user="U0REQUESTER")  # self-approval
    assert requester_click.status == 200

    assert bot.poster.replay().status == 409


def _with_value(payload: dict[str, Any], value: str) -> dict[str, Any]:
    return {**payload, "actions": [{**payload["actions"][0], "value": value}]}


def test_a_button_naming_another_session_decides_nothing(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    approval_id = bot.approval_id()
    payload = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    forged = ids.button_value(approval_id, "T0TEST:C0OTHER:1700000000.000100")

    assert bot.poster.post_action(_with_value(payload, forged)).status == 200
    bot.drain()

    session_id = bot.services.stores.approvals.session_of(approval_id)
    assert session_id is not None
    approval = bot.services.stores.approvals.get(session_id, approval_id)
    assert approval is not None
    assert approval.decision is None
    assert bot.ephemeral_texts(APPROVER)[-1] == answers.unknown_approval()


def test_bolt_does_not_verify_again_what_the_guard_verified(bot: Bot) -> None:
    behind_guard = build_app(bot.services.settings, bot.services, token_verification=False, verified_at_edge=True)
    alone = build_app(bot.services.settings, bot.services, token_verification=False)

    assert not any(isinstance(each, RequestVerification) for each in behind_guard._middleware_list)
    assert any(isinstance(each, RequestVerification) for each in alone._middleware_list)


def test_a_click_replayed_after_slack_could_not_list_the_channel_is_refused(bot: Bot) -> None:
    """The script records a click's signature with its answer; a click that ends without one (Slack failed
    while the script needed the channel's members) has its signature recorded before Slack is asked."""
    bot.mention("restart checkout")
    bot.drain()
    approval_id = bot.approval_id()
    shard = _shard(bot, approval_id)
    bot.services.stores.redis.delete(
        keys.channel_members(TEAM, CHANNEL)
    )  # cold caches (one key per call: cluster slots)
    bot.services.stores.redis.delete(keys.channel_members(TEAM, CHANNEL, shard=shard))
    bot.slack.error_next("conversations.members", "fatal_error")

    assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
    bot.drain()
    assert _approval(bot, approval_id).decision is None
    assert bot.ephemeral_texts(APPROVER)[-1] == answers.membership_unknown()

    replayed = bot.poster.replay()  # byte for byte: same body, timestamp and signature

    assert replayed.status == 409
    assert _approval(bot, approval_id).decision is None


def test_someone_who_left_the_channel_is_refused_once_the_cached_members_expire(redis_client: redis.Redis) -> None:
    """The script reads the shard's copy of the channel's members, made from the shared copy: it expires with
    the shared copy (one minute from Slack's answer), not a minute after it was copied."""
    with running_bot(redis_client, agent_factory=two_gates_agent) as bot:
        bot.mention("restart api and search")
        bot.drain()
        first, second = bot.approval_id(0), bot.approval_id(1)
        assert _shard(bot, first) == _shard(bot, second)
        shard = _shard(bot, first)
        client = bot.services.stores.redis
        client.delete(keys.channel_members(TEAM, CHANNEL, shard=shard))
        client.delete(keys.channel_members(TEAM, CHANNEL))
        # Cached 59 seconds ago, when LEFT was still in the channel; LEFT has left since.
        client.sadd(keys.channel_members(TEAM, CHANNEL), *CHANNEL_MEMBERS)
        client.pexpire(keys.channel_members(TEAM, CHANNEL), 700)
        bot.slack.set_channel_members(CHANNEL, [user for user in CHANNEL_MEMBERS if user != LEFT])

        assert bot.click(ids.APPROVE_ACTION, first, user=LEFT).status == 200  # the cache still said so
        time.sleep(1.0)  # the shared copy has expired: Slack would be asked, and says LEFT is gone
        assert not client.exists(keys.channel_members(TEAM, CHANNEL))

        assert bot.click(ids.APPROVE_ACTION, second, user=LEFT).status == 200

        bot.drain()
        assert _approval(bot, second).decision is None
        assert bot.ephemeral_texts(LEFT)[-1] == answers.not_a_channel_member(CHANNEL)


def test_someone_removed_from_an_approver_group_is_refused_once_the_cached_group_expires(
    redis_client: redis.Redis,
) -> None:
    """The same for user groups (kept five minutes from Slack's answer, whichever shard's copy is read)."""
    with running_bot(
        redis_client, agent_factory=two_gates_agent, policy_path=SCENARIO_POLICY, usergroups={"S0ONCALL": [LEFT]}
    ) as bot:
        bot.mention("restart api and search")
        bot.drain()
        first, second = bot.approval_id(0), bot.approval_id(1)
        shard = _shard(bot, first)
        client = bot.services.stores.redis
        client.delete(keys.usergroup(TEAM, "S0ONCALL", shard=shard))
        # Cached 299 seconds ago, when LEFT was on call; LEFT was taken off the group since.
        client.set(keys.usergroup(TEAM, "S0ONCALL"), f'["{LEFT}"]', px=700)
        bot.slack.set_usergroup("S0ONCALL", ["U0ONCALL"])

        assert bot.click(ids.APPROVE_ACTION, first, user=LEFT).status == 200  # the cache still said so
        time.sleep(1.0)
        assert not client.exists(keys.usergroup(TEAM, "S0ONCALL"))

        assert bot.click(ids.APPROVE_ACTION, second, user=LEFT).status == 200

        bot.drain()
        assert _approval(bot, second).decision is None
        assert "may approve or deny it" in bot.ephemeral_texts(LEFT)[-1]


def test_the_app_served_without_the_guard_still_refuses_an_unsigned_click(bot: Bot) -> None:
    """Only the guarded app turns Bolt's own verification off: served without the guard, Bolt verifies."""
    bot.mention("restart checkout")
    bot.drain()
    approval_id = bot.approval_id()
    message = next(m for m in bot.approval_messages() if m["ts"])
    payload = message_click(bot.slack, ids.APPROVE_ACTION, approval_id, user=APPROVER, channel=CHANNEL, message=message)
    app = build_app(bot.services.settings, bot.services, token_verification=False)

    with serve_wsgi(wsgi_app(app)) as url, SignedPoster(url, SIGNING_SECRET + "-not-the-secret") as forger:
        answered = forger.post_action(payload)

    assert answered.status == 401
    assert _approval(bot, approval_id).decision is None


def _answered_in_process(bot: Bot, payload: dict[str, Any], *, timestamp: str = "") -> tuple[str, Iterable[bytes]]:
    """The production app (the guard, the edge, Bolt) answers the signed ``payload``: its status and its answer,
    not closed yet (a WSGI server closes it once sent: ``bot.slack.edge.after_answer``'s steps run then).

    Signed at ``timestamp`` (default: now): the same payload at the same timestamp is a replay.
    """
    body = slack_requests.encode_payload(payload)
    timestamp = timestamp or str(int(time.time()))
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/slack/events",
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "HTTP_X_SLACK_REQUEST_TIMESTAMP": timestamp,
        "HTTP_X_SLACK_SIGNATURE": slack_requests.sign(SIGNING_SECRET, timestamp, body),
    }
    statuses: list[str] = []
    answer = guarded_wsgi_app(bot.services.settings, bot.services)(environ, lambda status, *_: statuses.append(status))
    return statuses[0], answer


def _two_questions(bot: Bot, **asked: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two questions asked through the API, their shards' caches warm: the messages of "Which region?" and of
    "Which zone?" (posted in either order)."""
    with api_caller(bot.services, bot.url) as api:
        for text in ("Which region?", "Which zone?"):
            ask = {"question": text, "channel": CHANNEL, "requester": REQUESTER, **asked}
            assert api.ask_question(ask).status_code == 201
    bot.drain()
    messages = bot.approval_messages()
    directory = Directory(clients=OneWorkspace(bot.services.slack), redis_client=bot.services.stores.redis)
    for index in (0, 1):  # the shards' caches warm: the clicks counted fill none
        assert directory.in_channel(TEAM, CHANNEL, REQUESTER, shard=_shard(bot, bot.approval_id(index)))
    region, zone = sorted(messages, key=lambda message: "Which zone?" in json.dumps(message["blocks"]))
    return region, zone


def _id_of(message: dict[str, Any]) -> str:
    approval_id = blocks.approval_id_shown(message)
    assert approval_id is not None
    return approval_id


def _verbs(commands: list[str]) -> list[str]:
    return [command.split()[0] for command in commands]


_CONFIRMATION = ["MULTI", "HSET", "ZADD", "LPUSH", "LTRIM", "EXEC"]
"""The answerer's confirmation queued in the outbox: one transaction."""


@pytest.mark.single_redis  # counted with MONITOR, which watches one server (a cluster has one per master)
def test_an_option_click_is_one_redis_round_trip_before_its_answer_and_the_confirmation_comes_after(bot: Bot) -> None:
    """As an Approve click, at the edge: the decide script records the click's signature with the answer."""
    first, second = _two_questions(bot, options=["eu", "us"])
    assert click_option(bot, first, 0, user=REQUESTER).status == 200  # connections now open
    bot.wait_told(REQUESTER, "Your answer to the question `Which region?` was sent to `ci-runner`.")  # all done
    option = f"{ids.CHOOSE_PREFIX}1"
    value = next(element["value"] for element in actions_of(second) if element["action_id"] == option)
    payload = slack_requests.block_actions(
        action_id=option, user_id=REQUESTER, channel_id=CHANNEL, message_ts=second["ts"], value=value
    )

    signed_at = str(int(time.time()))
    with commands_sent(bot.services.stores.redis) as before_the_answer:
        status, answer = _answered_in_process(bot, payload, timestamp=signed_at)
    with commands_sent(bot.services.stores.redis) as after_the_answer:
        getattr(answer, "close", lambda: None)()

    assert status.startswith("200")
    assert _verbs(before_the_answer) == ["EVALSHA"], before_the_answer
    assert _verbs(after_the_answer) == _CONFIRMATION, after_the_answer
    bot.wait_told(REQUESTER, "Your answer to the question `Which zone?` was sent to `ci-runner`.")
    replayed, _ = _answered_in_process(bot, payload, timestamp=signed_at)
    assert replayed.startswith("409")  # its signature was recorded by the script
    decision = _approval(bot, _id_of(second)).decision
    assert decision is not None
    assert (decision.decided_by, decision.answer) == (REQUESTER, "us")


@pytest.mark.single_redis  # counted with MONITOR, which watches one server (a cluster has one per master)
def test_an_answer_form_submitted_reads_its_question_without_looking_its_session_up_and_confirms_after(
    bot: Bot,
) -> None:
    form = {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}
    first, second = _two_questions(bot, schema=form)
    view = bot.open_answer(_id_of(first), user=REQUESTER)
    assert bot.submit_answer_form(view, user=REQUESTER, changes={"note": "first"}).status == 200  # connections open
    bot.wait_told(REQUESTER, "Your answer to the question `Which region?` was sent to `ci-runner`.")  # all done
    view = bot.open_answer(_id_of(second), user=REQUESTER)
    payload = slack_requests.view_submission(
        callback_id=ids.ANSWER_MODAL_CALLBACK,
        user_id=REQUESTER,
        view_id=view["id"],
        external_id=view.get("external_id", ""),
        private_metadata=view["private_metadata"],
        values=edit_form_state(view, {"note": "ship it"}),
    )

    with commands_sent(bot.services.stores.redis) as before_the_answer:
        status, answer = _answered_in_process(bot, payload)
    with commands_sent(bot.services.stores.redis) as after_the_answer:
        getattr(answer, "close", lambda: None)()

    assert status.startswith("200")
    # The signature, the modal's binding, the question (one pipeline of reads, its session known from the binding),
    # the decide script (given that session): as many round trips as a deny form's, where the session is looked up.
    verbs = _verbs(before_the_answer)
    assert (verbs[:2], verbs[-1]) == (["SET", "GET"], "EVALSHA"), before_the_answer
    assert set(verbs[2:-1]) <= {"HGETALL", "LRANGE", "SMEMBERS"}, before_the_answer
    assert _verbs(after_the_answer) == _CONFIRMATION, after_the_answer
    decision = _approval(bot, _id_of(second)).decision
    assert decision is not None
    assert (decision.decided_by, decision.answer) == (REQUESTER, {"note": "ship it"})


def test_a_click_on_a_button_the_bot_no_longer_knows_is_answered_and_records_nothing(bot: Bot) -> None:
    approval_id, _ = bot.ask()
    payload = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    payload["actions"][0]["action_id"] = "signoff_snooze_1h"  # a button of a version that had it, or will
    assert bot.poster.post_action(payload).status == 200
    bot.drain()
    assert bot.ephemeral_texts(APPROVER) == [answers.button_unknown()]
    assert _approval(bot, approval_id).decision is None
