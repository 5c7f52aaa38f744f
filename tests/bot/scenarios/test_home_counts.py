"""App Home's counts when a person has more waiting than one read of their indexes holds: "…and N more" is true."""

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.flow.home_queue import OPEN_READ
from tests.bot.support.crowd import other_approvals
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, TEAM
from tests.bot.support.policy_files import write

POLICY = """\
rules:
  - name: restarts
    match: {tools: [restart_service]}
"""


@pytest.fixture
def bot(redis_client: redis.Redis, tmp_path: Path) -> Iterator[Bot]:
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=write(tmp_path, POLICY)) as running:
        yield running


@pytest.mark.parametrize("waiting", [40, OPEN_READ + 150])
def test_the_more_line_does_not_undercount_what_waits(bot: Bot, redis_client: redis.Redis, waiting: int) -> None:
    """All read: the exact rest. More than one read of each index (``OPEN_READ``): a floor, said to be one."""
    other_approvals(redis_client, waiting, team_id=TEAM, channel_id=CHANNEL, approver=APPROVER)
    home = json.dumps(bot.open_home(APPROVER))
    shown = home.count("restart_service")
    more = re.search(r"and (\d+)(\+?) more", home)
    assert more is not None, home[:2000]
    hidden, open_ended = int(more.group(1)), more.group(2) == "+"
    if waiting < OPEN_READ:
        assert (shown + hidden, open_ended) == (waiting, False), more.group(0)
    else:
        assert open_ended, more.group(0)
        assert shown + hidden <= waiting
