"""The bot end to end: signed requests over HTTP, loopback Slack, real Redis, the worker."""

import json
import threading

import pytest
import redis

from bot.render import action_ids as ids
from bot.store import keys
from bot.store.audit import AuditEntry
from state.interrupt import _InterruptState
from state.store import keys_for
from tests.bot.support import shards
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot, start_thread, thread_session
from tests.bot.support.people import APPROVER, OUTSIDER, REQUESTER, SECOND_APPROVER
from tests.bot.support.restarts import approved_after_a_restart


def _decisions(bot: Bot) -> list[AuditEntry]:
    return [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]


def test_mention_interrupt_approve_resume_reply(bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")
    [message] = bot.approval_messages()
    assert "restart_service" in message["text"]
    assert not is_decided(message)
    assert bot.services.stores.sessions.interrupted_sessions() == [thread_session(thread_ts)]

    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
    bot.drain()

    [decided] = bot.approval_messages()
    assert is_decided(decided)
    assert f"<@{APPROVER}>" in json.dumps(decided["blocks"])
    assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"
    assert bot.services.stores.sessions.interrupted_sessions() == []


def test_deny_with_a_reason_through_the_modal(bot: Bot) -> None:
    thread_ts = start_thread(bot, "roll back payments")
    approval_id = bot.approval_id()

    assert bot.click(ids.DENY_ACTION, approval_id, user=APPROVER).status == 200
    [opened] = bot.slack.wait_for("views.open")
    assert opened.args["view"]["callback_id"] == ids.DENY_MODAL_CALLBACK
    assert json.loads(opened.args["view"]["private_metadata"])["approval_id"] == approval_id

    response = bot.submit_deny(
        approval_id, user=APPROVER, reason="release freeze until 18:00", view=dict(opened.response["view"])
    )
    assert response.status == 200
    assert response.body in ("", "{}")  # a plain ack closes the modal
    bot.drain()

    assert is_decided(bot.approval_messages()[0])
    assert "release freeze until 18:00" in json.dumps(bot.approval_messages()[0]["blocks"])
    reply = bot.thread_texts(thread_ts)[-1]
    assert reply == f"Not run: <@{APPROVER}> denied it: release freeze until 18:00"


@pytest.mark.parametrize("blank", ["", "   \n\t "])
def test_a_required_reason_cannot_be_blank(policed_bot: Bot, blank: str) -> None:
    bot = policed_bot
    start_thread(bot, "roll back payments")
    approval_id = bot.approval_id()

    response = bot.submit_deny(approval_id, user=APPROVER, reason=blank)

    assert response.status == 200
    answer = response.json()
    assert answer["response_action"] == "errors"
    assert ids.DENY_REASON_BLOCK in answer["errors"]
    bot.drain()
    assert not is_decided(bot.approval_messages()[0])
    assert bot.services.stores.approvals.open_ids(_session(bot)) == {approval_id}


def _session(bot: Bot) -> str:
    return thread_session(bot.approval_messages()[0]["thread_ts"])


def test_two_interrupts_in_one_session_resume_only_after_both(redis_client: redis.Redis) -> None:
    from tests.bot.support.agents import two_gates_agent

    with running_bot(redis_client, agent_factory=two_gates_agent) as bot:
        thread_ts = start_thread(bot, "restart api and search")
        assert len(bot.approval_messages()) == 2
        first, second = bot.approval_id(0), bot.approval_id(1)

        bot.click(ids.APPROVE_ACTION, first, user=APPROVER)
        bot.drain()
        assert bot.services.stores.sessions.interrupted_sessions() == [_session(bot)]
        assert "both restarted" not in bot.thread_texts(thread_ts)

        bot.click(ids.APPROVE_ACTION, second, user=SECOND_APPROVER)
        bot.drain()
        assert bot.thread_texts(thread_ts)[-1] == "both restarted"
        assert all(is_decided(message) for message in bot.approval_messages())


def test_a_double_click_changes_nothing_and_says_who_decided(bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")
    approval_id = bot.approval_id()

    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.drain()

    assert len(_decisions(bot)) == 1
    assert bot.thread_texts(thread_ts).count("checkout: 3 replicas restarted") == 1
    [notice] = bot.ephemeral_texts(APPROVER)
    assert "Already approved" in notice
    assert f"<@{APPROVER}>" in notice


def test_two_approvers_at_once_exactly_one_decision_stands(bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")
    approval_id = bot.approval_id()
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def click(user: str) -> None:
        barrier.wait()
        statuses.append(bot.click(ids.APPROVE_ACTION, approval_id, user=user).status)

    threads = [threading.Thread(target=click, args=(user,)) for user in (APPROVER, SECOND_APPROVER)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    bot.drain()

    assert statuses == [200, 200]
    [decision] = _decisions(bot)
    winner = decision.actor
    loser = SECOND_APPROVER if winner == APPROVER else APPROVER
    assert "Already approved" in bot.ephemeral_texts(loser)[0]
    assert bot.ephemeral_texts(winner) == []
    assert bot.thread_texts(thread_ts).count("checkout: 3 replicas restarted") == 1


def test_an_unauthorized_click_is_refused_named_and_audited(policed_bot: Bot) -> None:
    bot = policed_bot
    start_thread(bot, "restart checkout")
    approval_id = bot.approval_id()

    bot.click(ids.APPROVE_ACTION, approval_id, user=OUTSIDER)
    bot.drain()

    assert not is_decided(bot.approval_messages()[0])
    [notice] = bot.ephemeral_texts(OUTSIDER)
    assert f"<@{APPROVER}>" in notice
    assert "<!subteam^S0ONCALL>" in notice
    [audited] = [entry for entry in bot.services.stores.audit.entries() if entry.event == "unauthorized"]
    assert audited.actor == OUTSIDER
    assert audited.details["refusal"] == "not_an_approver"


def test_a_user_group_member_may_approve(policed_bot: Bot) -> None:
    bot = policed_bot
    thread_ts = start_thread(bot, "restart checkout")
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user="U0ONCALL")
    bot.drain()
    assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"
    assert len(bot.slack.calls("usergroups.users.list")) == 1


def test_self_approval_is_refused_even_for_a_listed_approver(policed_bot: Bot) -> None:
    bot = policed_bot
    start_thread(bot, "restart checkout")  # asked by REQUESTER, who is listed as an approver

    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=REQUESTER)
    bot.drain()

    assert not is_decided(bot.approval_messages()[0])
    [notice] = bot.ephemeral_texts(REQUESTER)
    assert "own request" in notice.lower() or "yourself" in notice.lower()


def test_thread_discussion_travels_with_the_decision(bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")
    bot.reply("is anyone deploying checkout right now?", user=SECOND_APPROVER, thread_ts=thread_ts)
    bot.reply("no, go ahead", user=REQUESTER, thread_ts=thread_ts)

    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()

    assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"
    approval = bot.services.stores.approvals.get(_session_of(thread_ts), bot.approval_id())
    assert approval is not None
    assert approval.decision is not None
    assert [(entry.user, entry.text) for entry in approval.decision.discussion] == [
        (SECOND_APPROVER, "is anyone deploying checkout right now?"),
        (REQUESTER, "no, go ahead"),
    ]
    assert "2 discussion replies" in json.dumps(bot.approval_messages()[0]["blocks"])


def _session_of(thread_ts: str) -> str:
    return thread_session(thread_ts)


def test_a_typed_approve_reply_decides(bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")

    bot.reply("approve: checked the dashboards", user=APPROVER, thread_ts=thread_ts)
    bot.drain()

    approval = bot.services.stores.approvals.get(_session_of(thread_ts), bot.approval_id())
    assert approval is not None
    assert approval.decision is not None
    assert (approval.decision.decision, approval.decision.decided_by) == ("approve", APPROVER)
    assert approval.decision.reason == "checked the dashboards"
    assert "checked the dashboards" in json.dumps(bot.approval_messages()[0]["blocks"])
    assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"


def test_slack_429_then_success_delivers_the_approval_message(bot: Bot) -> None:
    bot.slack.fail_next("chat.postMessage", status=429, retry_after=1)
    assert bot.mention("restart checkout").status == 200
    bot.drain()
    assert bot.approval_messages() == []  # rate limited: waiting in the outbox
    assert bot.services.stores.outbox.pending() == 1

    deadline_rounds = 0
    while not bot.approval_messages() and deadline_rounds < 60:
        bot.worker.deliver_once(wait_s=0.05)
        deadline_rounds += 1
    assert len(bot.approval_messages()) == 1
    attempts = bot.slack.calls("chat.postMessage")
    assert [call.status for call in attempts] == [429, 200]
    assert attempts[1].at - attempts[0].at >= 0.9  # Retry-After honoured


def test_the_bot_restarted_between_interrupt_and_click(redis_client: redis.Redis) -> None:
    with approved_after_a_restart(redis_client, demo_factory) as (restarted, message):
        [update] = restarted.slack.calls("chat.update")
        assert update.args["ts"] == message["ts"]
        replies = [call.args["text"] for call in restarted.slack.calls("chat.postMessage")]
        assert replies == ["checkout: 3 replicas restarted"]


def test_interrupt_state_stays_wire_compatible_through_the_bot(bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")
    session = bot.services.stores.sessions.load(_session_of(thread_ts))
    assert session is not None
    restored = _InterruptState.from_dict(session.interrupt_state)
    [interrupt] = restored.interrupts.values()
    assert interrupt.reason["tool"] == "restart_service"
    assert keys.approval(_session_of(thread_ts), bot.approval_id()).startswith("signoff:{")


def test_a_finished_round_expires_after_the_retention_period_and_nothing_else_lingers(bot: Bot) -> None:
    thread_ts = start_thread(bot, "restart checkout")
    approval_id = bot.approval_id()
    session_id = _session_of(thread_ts)
    redis_client = bot.services.stores.redis
    approval_key = keys.approval(session_id, approval_id)
    for waiting in (
        approval_key,
        keys.round_(session_id),
        keys.thread(session_id),
        keys_for(session_id).session,
    ):
        assert redis_client.ttl(waiting) == -1, waiting  # nothing expires while approvals wait

    bot.reply("looks fine", user=SECOND_APPROVER, thread_ts=thread_ts)
    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.drain()

    retention = bot.services.settings.retention_days * 86_400
    for key in (
        approval_key,
        keys.discussion(session_id, approval_id),
        keys.approval_session(keys.shard_of(session_id), approval_id),
        keys.round_(session_id),
        keys.thread(session_id),
        keys_for(session_id).session,
    ):
        assert 0 < redis_client.ttl(key) <= retention, key
    assert shards.open_approvals(bot.services.stores.redis) == []
    assert bot.services.stores.schedule.pending() == 0
    assert bot.services.stores.outbox.pending() == 0
    assert bot.services.stores.jobs.pending_count() == 0
