"""App Home when other workspaces hold thousands of requests, decisions and grants: a person's own are all there
(their pending request, their decision, their grant with its Revoke button), and building the tab costs what their
own cost, not what everyone holds."""

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis

from bot.render import action_ids as ids
from tests.bot.support.crowd import commands_processed, other_approvals, other_grants
from tests.bot.support.grant_clicks import approve_and_allow, grant_buttons
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER
from tests.bot.support.policy_files import write

POLICY = """\
rules:
  - name: restarts
    match: {tools: [restart_service]}
    grants: {durations: [1h]}
"""
CROWD = 3_000
HOME_COMMANDS = 600
"""Far above what one person's tab costs (under a hundred), far below one read of each of the crowd's requests."""


@pytest.fixture
def bot(redis_client: redis.Redis, tmp_path: Path) -> Iterator[Bot]:
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=write(tmp_path, POLICY)) as running:
        yield running


def test_a_person_s_home_shows_all_their_own_whatever_others_hold(bot: Bot, redis_client: redis.Redis) -> None:
    bot.mention("restart checkout")
    bot.drain()
    [button] = [b for b in grant_buttons(bot.approval_messages()[-1]) if b["value"].startswith("3600~")]
    approve_and_allow(bot, button["value"], user=APPROVER)  # a decision and a grant of theirs
    bot.drain()
    bot.mention("restart search")  # and a request waiting for them
    bot.drain()

    # Others: requests waiting longer, decisions made later, grants ending sooner than theirs.
    other_approvals(redis_client, CROWD)
    other_approvals(redis_client, CROWD, decided_at=datetime.now(UTC) + timedelta(hours=1))
    other_grants(redis_client, CROWD, expires_at=datetime.now(UTC) + timedelta(minutes=30))

    before = commands_processed(redis_client)
    home = json.dumps(bot.open_home(APPROVER))
    spent = commands_processed(redis_client) - before

    assert ids.REVOKE_GRANT_ACTION in home, "their grant and its Revoke button"
    assert "checkout" in home.split("Recent")[-1], "their decision among the recent ones"
    assert "search" in home, "the request waiting for them"
    assert "T0OTHERS" not in home
    assert spent < HOME_COMMANDS, f"the tab cost {spent} Redis commands with {3 * CROWD} records elsewhere"
