"""Requests and conversations: the slash command, follow-ups in a thread, Discuss, a failing agent."""

import time
from collections.abc import Callable
from typing import Any

import redis

from agent import Agent, ModelError, ScriptedModel
from bot.render import action_ids as ids
from bot.worker import MAX_DELIVERIES
from loopback_slack import slack_requests
from state.shapes import Message
from tests.bot.support import shards
from tests.bot.support.harness import Bot, running_bot, thread_session
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER, SECOND_APPROVER


def _eventually(condition: Callable[[], bool], *, timeout_s: float = 5) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        time.sleep(0.01)


def test_the_slash_command_opens_a_thread_and_asks_there(bot: Bot) -> None:
    command = slack_requests.slash_command(
        command=ids.AGENT_COMMAND, user_id=REQUESTER, channel_id=CHANNEL, text="restart checkout"
    )
    response = bot.poster.post_command(command)
    assert response.status == 200

    [anchor] = bot.slack.wait_for("chat.postMessage")
    assert anchor.args["text"] == f"<@{REQUESTER}> asked the agent: restart checkout"
    _eventually(lambda: shards.jobs_queued(bot.services.stores.redis) == 1)
    bot.drain()

    [approval] = bot.approval_messages()
    anchor_ts = anchor.response["ts"]
    assert approval["thread_ts"] == anchor_ts
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()
    assert bot.thread_texts(anchor_ts)[-1] == "checkout: 3 replicas restarted"


def test_a_slash_command_mentioning_payload_still_reaches_the_agent(bot: Bot) -> None:
    # Bolt 1.30 mistakes any form body containing "payload" for an interaction; the guard fixes that.
    command = slack_requests.slash_command(
        command=ids.AGENT_COMMAND, user_id=REQUESTER, channel_id=CHANNEL, text="logs for payload-api & friends"
    )
    assert bot.poster.post_command(command).status == 200
    [anchor] = bot.slack.wait_for("chat.postMessage")
    assert anchor.args["text"] == f"<@{REQUESTER}> asked the agent: logs for payload-api &amp; friends"


def test_a_later_mention_in_the_thread_continues_the_same_session(bot: Bot) -> None:
    bot.mention("logs for checkout")
    bot.drain()
    [first_reply] = bot.slack.calls("chat.postMessage")
    thread_ts = first_reply.args["thread_ts"]

    bot.mention("logs for search", thread_ts=thread_ts)
    bot.drain()

    session = bot.services.stores.sessions.load(thread_session(thread_ts))
    assert session is not None
    user_texts = [
        block["text"]
        for message in session.messages
        if message["role"] == "user"
        for block in message["content"]
        if "text" in block
    ]
    assert user_texts == ["logs for checkout", "logs for search"]
    assert "index lag 40 s" in bot.thread_texts(thread_ts)[-1]


def test_a_new_request_while_approvals_wait_is_answered_and_changes_nothing(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    thread_ts = bot.approval_messages()[0]["thread_ts"]

    bot.mention("scale search to 5", thread_ts=thread_ts)
    bot.drain()

    assert "waiting for the approvals above" in bot.thread_texts(thread_ts)[-1]
    assert len(bot.approval_messages()) == 1
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()
    assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"


def test_discuss_asks_in_the_thread(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    thread_ts = bot.approval_messages()[0]["thread_ts"]

    assert bot.click(ids.DISCUSS_ACTION, bot.approval_id(), user=SECOND_APPROVER).status == 200
    bot.drain()

    assert f"<@{SECOND_APPROVER}>" in bot.thread_texts(thread_ts)[-1]
    assert bot.services.stores.approvals.open_ids(thread_session(thread_ts)) == {bot.approval_id()}


def _broken_factory(*, session_id: str, store: Any) -> Agent:
    def fail(messages: list[Message]) -> Any:
        raise ModelError("provider=<test> | the model is down")

    return Agent(ScriptedModel(fail), [], session_id=session_id, store=store)


def test_a_failing_agent_says_so_once_retries_then_gives_up(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=_broken_factory) as bot:
        bot.worker.claim_idle_ms = 0  # retry at once instead of after a minute
        bot.mention("hello")
        bot.drain()

        texts = [call.args["text"] for call in bot.slack.calls("chat.postMessage")]
        assert len(texts) == 2
        assert "will retry" in texts[0]
        assert "the model is down" in texts[0]
        assert f"failed {MAX_DELIVERIES} times and gave up" in texts[1]
        assert bot.services.stores.jobs.pending_count() == 0
        abandoned = [entry for entry in bot.services.stores.audit.entries() if entry.event == "job_abandoned"]
        assert len(abandoned) == 1
