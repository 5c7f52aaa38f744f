"""Invariant 1 (Seen) for typed decisions: a reply decides only a request posted before it was written."""

from functools import partial

import redis

from bot.flow.access import Origin
from bot.render import action_ids as ids
from bot.store import keys
from loopback_slack import slack_requests
from loopback_slack.slack_requests import TEAM_ID
from tests.bot.support.agents import two_gates_agent
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, SECOND_APPROVER


def _later(ts: str, micros: int = 1) -> str:
    seconds, _, fraction = ts.partition(".")
    total = int(seconds) * 1_000_000 + int(fraction.ljust(6, "0")) + micros
    return f"{total // 1_000_000}.{total % 1_000_000:06d}"


def _reply(bot: Bot, text: str, *, user: str, thread_ts: str, ts: str) -> None:
    """A thread reply written at ``ts`` (delivered now, however late that is)."""
    event = slack_requests.message_event(channel=CHANNEL, text=text, user=user, thread_ts=thread_ts, ts=ts)
    assert bot.poster.post_event(event).status == 200


def test_a_reply_delivered_late_does_not_decide_the_next_round(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=partial(two_gates_agent, concurrent=False)) as bot:
        bot.mention("restart api and search")
        bot.drain()
        [first] = bot.approval_messages()
        # Written while only round 1 was posted; Slack delivers it after round 2 is up (0.5 s late, say).
        written_at = _later(first["ts"])
        bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER)
        bot.drain()
        second_message = bot.approval_messages()[1]
        assert second_message["ts"] > written_at
        second = bot.approval_id(1)

        _reply(bot, "approve: looks fine", user=SECOND_APPROVER, thread_ts=first["thread_ts"], ts=written_at)
        bot.drain()

        approval = bot.services.stores.approvals.find(second)
        assert approval is not None
        assert approval.decision is None
        assert approval.discussion == ()  # not a reply to a request that did not exist yet
        assert bot.services.stores.approvals.open_ids(approval.request.session_id) == {second}
        assert "Nothing was decided" in bot.ephemeral_texts(SECOND_APPROVER)[-1]
        assert [entry.event for entry in bot.services.stores.audit.entries()].count("decision") == 1


def test_a_reply_written_after_the_message_decides_it_and_says_which(bot: Bot) -> None:
    approval_id, _session_id = bot.ask()
    [message] = bot.approval_messages()

    _reply(bot, "deny: not during peak", user=APPROVER, thread_ts=message["thread_ts"], ts=_later(message["ts"]))
    bot.drain()

    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is not None
    assert (approval.decision.decision, approval.decision.reason) == ("deny", "not during peak")
    said = bot.ephemeral_texts(APPROVER)[-1]
    assert said.startswith("Your reply denied the request to run `restart_service`")


def test_a_reply_before_the_approval_message_was_posted_decides_nothing(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.worker.run_jobs_once(block_ms=1)  # the round is open, its message still in the outbox
    [approval_id] = bot.services.stores.approvals.open_everywhere()
    session_id = bot.services.stores.approvals.session_of(approval_id)
    assert session_id is not None
    thread_ts = session_id.rsplit(":", 1)[1]

    _reply(bot, "approve: go", user=APPROVER, thread_ts=thread_ts, ts=_later(thread_ts))
    bot.drain()

    approval = bot.services.stores.approvals.get(session_id, approval_id)
    assert approval is not None
    assert approval.decision is None
    assert "Nothing was decided" in bot.ephemeral_texts(APPROVER)[-1]


def test_the_decide_script_compares_slack_ts_exactly(bot: Bot) -> None:
    # Re-checked atomically with the decision, as decimal strings: these two differ by 0.1 us, equal as doubles.
    approval_id, session_id = bot.ask()
    bot.services.stores.redis.hset(keys.approval(session_id, approval_id), "message_ts", "1764547200.1234570")
    origin = Origin("reply", TEAM_ID, TEAM_ID, CHANNEL, session_id.rsplit(":", 1)[1])
    approve_by_reply = partial(
        bot.services.decisions.decide,
        approval_id,
        user_id=APPROVER,
        kind="approve",
        reason="ok",
        source="reply",
        origin=origin,
    )

    early = approve_by_reply(written_at="1764547200.1234569")
    assert early.status == "unseen"
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None

    on_time = approve_by_reply(written_at="1764547200.123457")
    assert on_time.status == "decided"
