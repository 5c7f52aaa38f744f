"""The demonstration agent asked for several things at once plans them as one turn: the risky calls are asked in
one round (a message each, in the thread), and the agent resumes once every one is decided, running each
approved call once and never a denied one."""

from bot.render import action_ids as ids
from tests.bot.support.harness import Bot, is_decided
from tests.bot.support.people import APPROVER

ASKED = "check the logs of checkout, then restart checkout and roll back payments"


def test_both_risky_calls_are_asked_in_one_round_and_the_agent_resumes_once_both_are_decided(bot: Bot) -> None:
    bot.mention(ASKED)
    bot.drain()
    restart, rollback = bot.approval_messages()
    assert "restart_service" in restart["text"]
    assert "rollback_deploy" in rollback["text"]
    assert restart["thread_ts"] == rollback["thread_ts"]
    thread_ts = str(restart["thread_ts"])

    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER).status == 200
    bot.drain()
    assert is_decided(bot.approval_messages()[0])
    assert not any("restarted" in text for text in bot.thread_texts(thread_ts)), "resumed before the round ended"

    bot.submit_deny(bot.approval_id(1), user=APPROVER, reason="payments is frozen today")
    bot.drain()
    reply = bot.thread_texts(thread_ts)[-1]
    assert "POST /pay 502 upstream timeout" in reply  # the logs, read without asking
    assert "checkout: 3 replicas restarted" in reply
    assert "rolled back" not in reply
    assert f"Not run: <@{APPROVER}> denied it: payments is frozen today" in reply
    assert [entry.event for entry in bot.services.stores.audit.entries()].count("resume") == 1
