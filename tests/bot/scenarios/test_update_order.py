"""Updates of one approval message apply in order: a late, older render never stays over a newer one.

Two dispatchers deliver updates of one quorum message at once: the first renders "1 of 3
approvals so far" and stalls before its ``chat.update`` reaches Slack; meanwhile a deny decides
the request and the second dispatcher delivers that. Whatever the order they reach Slack in, the
message ends showing the stored decision, without buttons.
"""

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.store import keys
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.held_client import HeldClient
from tests.bot.support.people import APPROVER, SECOND_APPROVER
from tests.bot.support.policy_files import write

QUORUM = """\
rules:
  - name: scaling
    match: {tools: [scale_service]}
    approvers: {users: [U0APPROVER, U0SECOND, U0THIRD]}
    quorum: 3
"""


@pytest.fixture
def quorum_bot(redis_client: redis.Redis, tmp_path: Path) -> Iterator[tuple[Bot, ManualClock]]:
    policy = write(tmp_path, QUORUM)
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as bot:
        yield bot, clock


@pytest.mark.parametrize("lease_runs_out_during_the_stall", [False, True])
def test_a_stalled_older_update_never_stays_over_the_decision(
    quorum_bot: tuple[Bot, ManualClock], lease_runs_out_during_the_stall: bool
) -> None:
    bot, clock = quorum_bot
    bot.mention("scale search to 5")
    bot.drain()
    approval_id = bot.approval_id()
    session_id = bot.services.stores.approvals.session_of(approval_id)
    assert session_id is not None

    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)  # a vote: its update is queued
    held = HeldClient("chat_update", token=bot.slack.token, base_url=bot.slack.url)
    stalled = bot.deliverer_through(held)
    first = threading.Thread(target=stalled.deliver_due)
    first.start()
    assert held.waiting.wait(10)  # rendered "1 of 3", its chat.update not yet at Slack

    bot.submit_deny(approval_id, user=SECOND_APPROVER, reason="not now")
    if lease_runs_out_during_the_stall:
        bot.services.stores.redis.pexpire(keys.message_update_lease(session_id, approval_id), 1)
    bot.worker.deliverer.deliver_due()  # the deny's update, delivered while the vote's is stalled
    held.release.set()
    first.join(10)
    clock.advance(5)
    bot.drain()

    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is not None
    assert approval.decision.decision == "deny"
    [message] = bot.approval_messages()
    assert is_decided(message)
    assert "1 of 3" not in json.dumps(message["blocks"])
    assert bot.services.stores.outbox.pending() == 0


def test_updates_already_shown_are_not_sent_again(quorum_bot: tuple[Bot, ManualClock]) -> None:
    bot, _clock = quorum_bot
    bot.mention("scale search to 5")
    bot.drain()
    approval_id = bot.approval_id()
    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.submit_deny(approval_id, user=SECOND_APPROVER, reason="not now")
    bot.drain()  # two updates queued; the first shows the latest state, the second finds nothing to do

    [update] = bot.slack.calls("chat.update")
    assert update.args["metadata"]["event_payload"]["version"] == 2
    assert is_decided(bot.approval_messages()[0])
