"""What a person was sent by direct message is on their App Home, and ``/approvals`` counts all that waits.

A copy (here the on-call person's, from the escalation ladder) is found through its own entry, not the workspace's
oldest page: a person outside the channel whom the rule names only through a user group still sees it behind 150
older requests. ``/approvals`` lists a bounded page and says how many wait in all.
"""

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.store import keys
from bot.store.approvals import approval_index
from tests.bot.support.crowd import OTHER_CHANNEL, other_approvals
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER, TEAM

ON_CALL = "U0ONCALLA"
POLICY = """\
rotations:
  primary:
    members: [U0ONCALLA]
    shift: 1d
    handoff: "09:00"
    timezone: UTC
    starts: 2026-11-29
rules:
  - name: service-changes
    match: {tools: [restart_service]}
    approvers: {users: [U0APPROVER], usergroups: [S0ONCALL]}
    escalation:
      levels:
        - after: 10m
          targets: {rotation: primary}
      repeat: 0
"""


@pytest.fixture
def bot_and_clock(redis_client: redis.Redis, tmp_path: Path) -> Iterator[tuple[Bot, ManualClock]]:
    policy = tmp_path / "policy.yml"
    policy.write_text(textwrap.dedent(POLICY))
    clock = ManualClock()
    with running_bot(
        redis_client,
        agent_factory=demo_factory,
        policy_path=policy,
        usergroups={"S0ONCALL": [ON_CALL]},
        clock=clock,
    ) as bot:
        yield bot, clock


def test_a_copy_sent_by_direct_message_is_on_home_behind_older_requests(
    bot_and_clock: tuple[Bot, ManualClock], redis_client: redis.Redis
) -> None:
    bot, clock = bot_and_clock
    bot.slack.set_channel_members(CHANNEL, [REQUESTER, APPROVER, "U0BOT"])  # the on-call person is not in it
    bot.slack.set_channel_members(OTHER_CHANNEL, [REQUESTER, "U0BOT"])
    other_approvals(redis_client, 150, team_id=TEAM)  # the workspace's oldest: its page of 100 holds none of theirs
    bot.mention("restart checkout")
    bot.drain()
    approval_id = bot.approval_id()
    clock.advance(10 * 60)
    bot.drain()
    assert [call for call in bot.slack.calls("chat.postMessage") if call.args["channel"] == ON_CALL], "the copy"

    assert approval_id in json.dumps(bot.open_home(ON_CALL))

    assert _copy_entries(redis_client) == 1
    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.drain()
    assert _copy_entries(redis_client) == 0, "the decision removed the copy's entry with the others"


def _copy_entries(client: redis.Redis) -> int:
    prefix = approval_index.copy(TEAM, ON_CALL)
    return sum(int(client.zlexcount(keys.open_by(shard), f"[{prefix}", f"({prefix}~")) for shard in keys.shards())


def test_approvals_counts_all_that_wait_and_lists_the_oldest(
    bot_and_clock: tuple[Bot, ManualClock], redis_client: redis.Redis
) -> None:
    bot, _clock = bot_and_clock
    other_approvals(redis_client, 60, team_id=TEAM, channel_id=CHANNEL)

    text = bot.slash_approvals()

    assert text.startswith("*60 requests waiting for a decision in this channel (showing the 50 oldest):*")
    assert text.count("\n•") == 50
