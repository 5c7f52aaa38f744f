"""The bot end to end: signed requests over HTTP, loopback Slack, real Redis, the worker."""

from bot import ids
from tests.bot.harness import APPROVER, Bot, is_decided


def test_mention_interrupt_approve_resume_reply(bot: Bot) -> None:
    assert bot.mention("restart checkout").status == 200
    bot.drain()

    [message] = bot.approval_messages()
    thread_ts = message["thread_ts"]
    assert "restart_service" in message["text"]
    assert not is_decided(message)

    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
    bot.drain()

    [decided] = bot.approval_messages()
    assert is_decided(decided)
    assert f"<@{APPROVER}>" in str(decided["blocks"])
    assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"
    assert bot.services.store.interrupted_sessions() == []
