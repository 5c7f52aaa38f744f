"""A post is made once: a delivery that dies (or times out) after Slack posted leaves one copy, tracked.

Each test stops a delivery between ``chat.postMessage`` and marking its outbox entry done (a real
worker process SIGKILLed while Slack holds its answer, a client that times out, two holders of
one entry whose lease ran out) and checks what people see: exactly one copy of each message, and
no Approve / Deny buttons left on a copy of a decided request.
"""

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from slack_sdk import WebClient

from bot.domain.clock import ManualClock
from bot.domain.workspaces import OneWorkspace
from bot.render import action_ids as ids
from bot.render import blocks
from bot.services import connect_redis
from bot.slack.outbound.delivery import Deliverer
from bot.store.queues.outbox import Outbox
from state import RedisServer
from tests.bot.support.doomed_worker import kill, worker_process
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.held_client import HeldClient
from tests.bot.support.people import APPROVER, CHANNEL
from tests.bot.support.policy_files import write

LEASE_S = 30  # the outbox lease: an entry whose holder died comes back after it


def _copies(bot: Bot, approval_id: str) -> list[dict[str, Any]]:
    """Every visible message of the channel that shows ``approval_id`` (posted or updated)."""
    return [m for m in bot.slack.messages(CHANNEL) if approval_id in str(m.get("blocks"))]


def _live(message: dict[str, Any]) -> bool:
    return any(str(block.get("block_id", "")).startswith(blocks.ACTIONS_BLOCK_PREFIX) for block in message["blocks"])


def _survivor(bot: Bot, *, after_s: float = LEASE_S + 1, timeout: int = 5) -> Deliverer:
    """Another worker's dispatcher, ``after_s`` later (the dead holder's lease has run out)."""
    return Deliverer(
        clients=OneWorkspace(WebClient(token=bot.slack.token, base_url=bot.slack.url, timeout=timeout)),
        outbox=Outbox(bot.services.stores.redis, clock=lambda: time.time() + after_s),
        approvals=bot.services.stores.approvals,
        redis=bot.services.stores.redis,
    )


def _kill_while_slack_holds_the_answer(bot: Bot, redis_url: str, *, posts_before: int) -> None:
    """A real worker posts (Slack posts it, then holds the answer); the worker is SIGKILLed before it hears back."""
    bot.slack.slow_next("chat.postMessage", 30)
    with worker_process(bot, redis_url) as worker:
        bot.slack.wait_for("chat.postMessage", count=posts_before + 1, timeout=30)
        kill(worker)


@pytest.fixture
def real_time_bot(redis_client: redis.Redis) -> Iterator[Bot]:
    """The demonstration bot on the real clock (a worker process shares it)."""
    with running_bot(redis_client, agent_factory=demo_factory) as running:
        yield running


def test_a_worker_killed_after_posting_an_approval_leaves_one_copy_and_it_is_the_one_updated(
    real_time_bot: Bot, redis_url: str
) -> None:
    bot = real_time_bot
    bot.mention("restart checkout")
    bot.worker.run_jobs_once(block_ms=1)  # the round opens; its post waits in the outbox
    _kill_while_slack_holds_the_answer(bot, redis_url, posts_before=0)
    [posted] = bot.approval_messages()
    approval_id = bot.approval_id()

    assert _survivor(bot).deliver_due() == 1
    assert len(bot.slack.calls("chat.postMessage")) == 1  # found by its marker, not posted again
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.request.message_ts == posted["ts"]

    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.drain()
    [shown] = _copies(bot, approval_id)
    assert shown["ts"] == posted["ts"]
    assert is_decided(shown)


def test_a_worker_killed_after_posting_the_answer_leaves_one_answer(real_time_bot: Bot, redis_url: str) -> None:
    bot = real_time_bot
    bot.mention("restart checkout")
    bot.drain()
    thread_ts = str(bot.approval_messages()[0]["thread_ts"])
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.worker.run_jobs_once(block_ms=1)  # the decision's update, then the resume: the answer waits in the outbox
    bot.worker.run_jobs_once(block_ms=1)
    posts_before = len(bot.slack.calls("chat.postMessage"))
    _kill_while_slack_holds_the_answer(bot, redis_url, posts_before=posts_before)
    answer = bot.texts_posted()[-1]

    _survivor(bot).deliver_due()
    bot.drain()
    assert bot.thread_texts(thread_ts).count(answer) == 1
    assert bot.services.stores.outbox.pending() == 0


def test_slack_answering_too_late_does_not_post_twice(bot: Bot) -> None:
    bot.slack.slow_next("chat.postMessage", 1.5)
    bot.mention("restart checkout")
    bot.worker.run_jobs_once(block_ms=1)
    impatient = _survivor(bot, after_s=0, timeout=1)
    impatient.deliver_due()  # Slack posts it, the client gives up waiting: the entry is retried
    assert bot.services.stores.outbox.pending() == 1

    _survivor(bot, after_s=LEASE_S + 1).deliver_due()
    [posted] = bot.approval_messages()
    approval = bot.services.stores.approvals.find(bot.approval_id())
    assert approval is not None
    assert approval.request.message_ts == posted["ts"]
    assert bot.services.stores.outbox.pending() == 0


@pytest.mark.parametrize("delete_fails_once", [False, True])
def test_two_holders_of_one_post_leave_one_copy_the_later_one_deletes_its_own(
    bot: Bot, delete_fails_once: bool
) -> None:
    bot.mention("restart checkout")
    bot.worker.run_jobs_once(block_ms=1)
    stalled_client = HeldClient("chat_postMessage", token=bot.slack.token, base_url=bot.slack.url)
    stalled = bot.deliverer_through(stalled_client)
    first = threading.Thread(target=stalled.deliver_due)
    first.start()
    assert stalled_client.waiting.wait(10)  # holds the entry, about to post

    _survivor(bot).deliver_due()  # its lease ran out: another worker posts and records its copy
    [kept] = bot.approval_messages()
    if delete_fails_once:
        bot.slack.fail_next("chat.delete", status=500, retry_after=None)
    stalled_client.release.set()
    first.join(10)
    assert len(bot.slack.calls("chat.postMessage")) == 2  # both posted...
    if delete_fails_once:
        _survivor(bot, after_s=LEASE_S + 5).deliver_due()  # ...the extra copy is removed on the retry
    assert [m["ts"] for m in bot.approval_messages()] == [kept["ts"]]  # ...one copy is left: the recorded one

    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()
    [shown] = bot.approval_messages()
    assert is_decided(shown)
    assert not _live(shown)
    assert bot.services.stores.outbox.pending() == 0


ON_CALL_POLICY = """\
rotations:
  primary: {members: [U0ONCALLB], shift: 1d, handoff: "09:00", timezone: UTC, starts: 2026-11-29}
rules:
  - name: service-changes
    match: {tools: [restart_service]}
    approvers: {users: [U0APPROVER, U0ONCALLB]}
    escalation:
      levels:
        - {after: 10m, targets: {rotation: primary}}
"""


class _AnswerLostForDms(WebClient):
    """Slack posts a DM, then the answer is lost on the way back (once): the worker cannot know it posted."""

    lost = False

    def api_call(self, api_method: str, **kwargs: Any) -> Any:
        response = super().api_call(api_method, **kwargs)
        arguments = kwargs.get("json") or kwargs.get("params") or {}
        if api_method == "chat.postMessage" and str(arguments.get("channel", "")).startswith("U") and not self.lost:
            self.lost = True
            raise TimeoutError("the answer was lost")
        return response


def test_a_dm_copy_whose_answer_was_lost_is_found_not_posted_again(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = write(tmp_path, ON_CALL_POLICY)
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as bot:
        bot.mention("restart checkout")
        bot.drain()
        approval_id = bot.approval_id()
        lossy = bot.deliverer_through(_AnswerLostForDms(token=bot.slack.token, base_url=bot.slack.url))
        clock.advance(11 * 60)
        bot.worker.escalator.tick()  # the rung: a notice in the thread and a copy for the on-call's DM
        while lossy.deliver_due():
            pass
        dm_channel = bot.slack.dm_channel("U0ONCALLB")
        [posted] = bot.slack.messages(dm_channel)

        clock.advance(60)
        bot.drain()  # the retry finds the copy by its marker
        assert [m["ts"] for m in bot.slack.messages(dm_channel)] == [posted["ts"]]
        approval = bot.services.stores.approvals.find(approval_id)
        assert approval is not None
        assert approval.copies == {"U0ONCALLB": (dm_channel, posted["ts"])}

        bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
        bot.drain()
        [copy] = bot.slack.messages(dm_channel)
        assert is_decided(copy)
        assert is_decided(bot.approval_messages()[0])


class _RedisStopsAfterThePost(WebClient):
    """Slack posts the message, then Redis goes away before the worker can record it (once)."""

    def __init__(self, server: RedisServer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.server = server
        self.stopped = False

    def api_call(self, api_method: str, **kwargs: Any) -> Any:
        response = super().api_call(api_method, **kwargs)
        if api_method == "chat.postMessage" and not self.stopped:
            self.stopped = True
            self.server.stop()
        return response


def test_redis_stopped_between_the_post_and_its_record_leaves_one_copy(own_redis: RedisServer) -> None:
    with running_bot(connect_redis(own_redis.url, retry_s=0.3), agent_factory=demo_factory) as bot:
        bot.mention("restart checkout")
        bot.worker.run_jobs_once(block_ms=1)
        unlucky = bot.deliverer_through(
            _RedisStopsAfterThePost(own_redis, token=bot.slack.token, base_url=bot.slack.url)
        )
        with pytest.raises(redis.ConnectionError):
            unlucky.deliver_due()  # posted; neither the record nor a retry could be written
        own_redis.start()
        [posted] = bot.approval_messages()

        _survivor(bot).deliver_due()
        assert [m["ts"] for m in bot.approval_messages()] == [posted["ts"]]
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        [shown] = bot.approval_messages()
        assert is_decided(shown)
