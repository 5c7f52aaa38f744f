"""Clicks while Slack is down: decided on the members Slack last listed, or refused with a word that reaches the person.

Slack refuses every connection inside ``FakeSlack.refusing`` (the bot's kept-alive connections are cut too); the
fresh caches of members (a minute for a channel, five for a user group) are made to lapse by deleting them, as the
minute passing would.
"""

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.render import action_ids as ids
from bot.render.texts import answers
from bot.store import keys
from bot.store.workspaces.directory import LOOKUP_TIMEOUT_S
from tests.bot.support.agents import two_gates_agent
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, TEAM

SCENARIO_POLICY = Path(__file__).parents[1] / "support" / "policies" / "scenario.yml"
ON_CALL = "U0ONCALL"  # an approver only through the user group S0ONCALL


@pytest.fixture
def gated_bot(redis_client: redis.Redis) -> Iterator[Bot]:
    """Two approvals in one round, under the scenario policy (S0ONCALL's members may approve)."""
    with running_bot(
        redis_client, agent_factory=two_gates_agent, policy_path=SCENARIO_POLICY, usergroups={"S0ONCALL": [ON_CALL]}
    ) as bot:
        bot.mention("restart api and search")
        bot.drain()
        yield bot


def _decision(bot: Bot, approval_id: str) -> str | None:
    session_id = bot.services.stores.approvals.session_of(approval_id)
    assert session_id is not None
    approval = bot.services.stores.approvals.get(session_id, approval_id)
    assert approval is not None
    return approval.decision.decision if approval.decision is not None else None


def _lapse_fresh_caches(bot: Bot, approval_id: str) -> None:
    """The fresh copies expire (their minute, or five, has passed); what Slack last listed stays."""
    session_id = bot.services.stores.approvals.session_of(approval_id)
    assert session_id is not None
    shard = keys.shard_of(session_id)
    client = bot.services.stores.redis
    for key in (
        keys.channel_members(TEAM, CHANNEL),
        keys.channel_members(TEAM, CHANNEL, shard=shard),
        keys.usergroup(TEAM, "S0ONCALL"),
        keys.usergroup(TEAM, "S0ONCALL", shard=shard),
    ):
        client.delete(key)  # one key per call: cluster slots


@pytest.mark.parametrize("user", [APPROVER, ON_CALL], ids=["channel-member", "group-member"])
def test_a_click_while_slack_is_down_is_decided_on_the_members_slack_last_listed(gated_bot: Bot, user: str) -> None:
    bot = gated_bot
    first, second = bot.approval_id(0), bot.approval_id(1)
    assert bot.click(ids.APPROVE_ACTION, first, user=user).status == 200  # Slack lists the channel and the group
    assert _decision(bot, first) == "approve"
    _lapse_fresh_caches(bot, second)
    click = bot.click_payload(ids.APPROVE_ACTION, second, user=user)

    with bot.slack.refusing():
        assert bot.poster.post_action(click).status == 200

    assert _decision(bot, second) == "approve"


def test_a_click_while_slack_is_down_and_never_listed_the_channel_is_refused_and_the_clicker_told_once_it_is_back(
    gated_bot: Bot,
) -> None:
    bot = gated_bot
    approval_id = bot.approval_id(0)
    _lapse_fresh_caches(bot, approval_id)
    bot.services.stores.redis.delete(keys.channel_members_known(TEAM, CHANNEL))
    click = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=APPROVER)

    with bot.slack.refusing():
        assert bot.poster.post_action(click).status == 200

    assert _decision(bot, approval_id) is None
    bot.drain()
    assert bot.ephemeral_texts(APPROVER) == [answers.membership_unknown()]


def test_a_click_that_fails_while_slack_is_down_is_told_through_the_outbox_once_slack_is_back(gated_bot: Bot) -> None:
    # Deny opens a modal: views.open cannot reach Slack, the listener fails, and so does the response URL's notice.
    bot = gated_bot
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER).status == 200  # members listed
    click = bot.click_payload(ids.DENY_ACTION, bot.approval_id(1), user=APPROVER)
    bot.drain()
    outbox = bot.services.stores.outbox

    with bot.slack.refusing():
        assert bot.poster.post_action(click).status == 200
        deadline = time.monotonic() + 10
        while not outbox.pending():  # the modal is opened after the click's answer, by a lazy listener
            assert time.monotonic() < deadline, "nothing was queued to tell the clicker"
            time.sleep(0.02)

    bot.wait_told(APPROVER, answers.click_failed("URLError"))
    assert not bot.slack.calls("views.open")


def test_a_click_while_slack_takes_the_lookup_and_never_answers_is_decided_within_slacks_window(
    gated_bot: Bot,
) -> None:
    bot = gated_bot
    first, second = bot.approval_id(0), bot.approval_id(1)
    assert bot.click(ids.APPROVE_ACTION, first, user=APPROVER).status == 200  # Slack lists the channel
    _lapse_fresh_caches(bot, second)
    bot.slack.slow_next("conversations.members", 30)  # takes the call, answers long after the client gave up
    click = bot.click_payload(ids.APPROVE_ACTION, second, user=APPROVER)

    started = time.monotonic()
    assert bot.poster.post_action(click).status == 200
    assert time.monotonic() - started < LOOKUP_TIMEOUT_S + 0.9  # within Slack's 3 s

    assert _decision(bot, second) == "approve"  # on the members Slack last listed
