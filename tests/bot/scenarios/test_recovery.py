"""Crashes at the worst moments, and what the bot does about them: nothing is lost, nothing runs twice."""

import json
import threading
import time
from functools import partial
from typing import Any

import pytest
import redis

from agent import Agent, ScriptedModel
from agent.models.scripted import text_turn
from bot.render import action_ids as ids
from bot.store import keys
from loopback_slack import slack_requests
from tests.bot.support.agents import HOLD_KEY, STARTED_KEY, completions, counting_agent, two_gates_agent
from tests.bot.support.crashes import Crash, crash_once, redeliver
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER, OUTSIDER, REQUESTER, SECOND_APPROVER


def test_a_start_that_died_before_posting_its_approvals_posts_them_on_redelivery(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        bot.worker.retries.first_s = 60  # the crashed step comes back by redelivery, never by the clock mid-drain
        crash_once(bot.services.publisher, "publish")
        bot.mention("restart checkout")
        bot.drain()
        assert bot.approval_messages() == []

        redeliver(bot)

        [message] = bot.approval_messages()
        assert "restart_service" in message["text"]
        assert not any("waiting for the approvals above" in text for text in bot.texts_posted())
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert bot.texts_posted()[-1] == "checkout: 3 replicas restarted"


def test_a_resume_that_died_after_new_interrupts_posts_them_on_redelivery(redis_client: redis.Redis) -> None:
    gates = partial(two_gates_agent, concurrent=False)
    with running_bot(redis_client, agent_factory=gates) as bot:
        bot.mention("restart api and search")
        bot.drain()
        assert len(bot.approval_messages()) == 1  # sequential: the second call waits behind the first
        bot.worker.retries.first_s = 60  # the crashed step comes back by redelivery, never by the clock mid-drain
        crash_once(bot.services.publisher, "publish")
        bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER)
        bot.drain()
        assert len(bot.approval_messages()) == 1

        redeliver(bot)

        assert len(bot.approval_messages()) == 2
        bot.click(ids.APPROVE_ACTION, bot.approval_id(1), user=APPROVER)
        bot.drain()
        assert bot.texts_posted()[-1] == "both restarted"


def test_a_resume_given_up_is_retried_when_someone_mentions_the_bot_again(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        bot.worker.claim_idle_ms = 0
        runner = bot.services.runner
        original = runner._resume

        def down(*args: Any, **kwargs: Any) -> None:
            raise Crash("the model provider is down")

        bot.mention("restart checkout")
        bot.drain()
        thread_ts = str(bot.approval_messages()[0]["thread_ts"])
        runner._resume = down  # type: ignore[method-assign]
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert "gave up" in bot.texts_posted()[-1]

        runner._resume = original  # type: ignore[method-assign]
        bot.mention("did it work?", thread_ts=thread_ts)
        bot.drain()
        assert bot.texts_posted()[-1] == "checkout: 3 replicas restarted"


def test_a_busy_mention_does_not_make_its_author_the_requester(redis_client: redis.Redis) -> None:
    gates = partial(two_gates_agent, concurrent=False)
    with running_bot(redis_client, agent_factory=gates) as bot:
        bot.mention("restart api and search", user=REQUESTER)
        bot.drain()
        thread_ts = str(bot.approval_messages()[0]["thread_ts"])
        bot.mention("status?", user=OUTSIDER, thread_ts=thread_ts)
        bot.drain()
        bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER)
        bot.drain()

        second = bot.services.stores.approvals.find(bot.approval_id(1))
        assert second is not None
        assert second.request.requested_by == REQUESTER
        bot.click(ids.APPROVE_ACTION, bot.approval_id(1), user=REQUESTER)  # still self-approval
        bot.drain()
        assert "approve it yourself" in bot.ephemeral_texts(REQUESTER)[-1]


def test_a_redelivered_start_after_the_answer_was_posted_changes_nothing(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        acked = bot.services.stores.jobs.ack
        bot.services.stores.jobs.ack = lambda job: None  # type: ignore[method-assign]  # the worker dies just before acking
        bot.mention("logs for checkout")
        bot.drain()
        bot.services.stores.jobs.ack = acked  # type: ignore[method-assign]
        replies = bot.texts_posted()

        redeliver(bot)

        assert bot.texts_posted() == replies
        assert bot.services.stores.jobs.pending_count() == 0


def test_the_agents_reply_cannot_ping_the_channel(redis_client: redis.Redis) -> None:
    def loud(*, session_id: str, store: Any) -> Agent:
        answer = text_turn("<!channel> urgent: <https://evil.example|click to re-auth>")
        return Agent(ScriptedModel([answer]), [], session_id=session_id, store=store)

    with running_bot(redis_client, agent_factory=loud) as bot:
        bot.mention("hello")
        bot.drain()
        [reply] = bot.slack.calls("chat.postMessage")
        assert "<!channel>" not in str(reply.args)
        assert "&lt;!channel&gt;" in str(reply.args["blocks"])


def test_a_long_job_is_not_taken_over_by_another_worker(redis_client: redis.Redis) -> None:
    factory = partial(counting_agent, client=redis_client)
    with running_bot(redis_client, agent_factory=factory) as bot:
        bot.mention("deploy api")
        bot.drain()
        redis_client.set(HOLD_KEY, "1")
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        busy = bot.services.worker(claim_idle_ms=300)
        running = threading.Thread(target=busy.run_jobs_once, kwargs={"block_ms": 1000})
        running.start()
        deadline = time.monotonic() + 10
        while not redis_client.exists(STARTED_KEY):
            assert time.monotonic() < deadline
            time.sleep(0.01)

        other = bot.services.worker(claim_idle_ms=300)
        time.sleep(0.9)  # three idle periods: without a heartbeat the job would look abandoned
        assert other.run_jobs_once(block_ms=1) == 0

        redis_client.delete(HOLD_KEY)
        running.join(10)
        bot.drain()
        assert (completions(redis_client, "deploy"), completions(redis_client, "notify")) == (1, 1)
        assert bot.texts_posted()[-1] == "deployed and told"


@pytest.mark.parametrize("user", [SECOND_APPROVER])
def test_a_retried_thread_reply_is_kept_once(bot: Bot, user: str) -> None:
    bot.mention("restart checkout")
    bot.drain()
    thread_ts = str(bot.approval_messages()[0]["thread_ts"])
    body = slack_requests.message_event(channel="C0OPS", text="careful, peak traffic", user=user, thread_ts=thread_ts)
    assert bot.poster.post_event(body).status == 200
    assert bot.poster.post_event(body, retry_num=1, timestamp=int(time.time()) - 3).status == 200
    approval = bot.services.stores.approvals.find(bot.approval_id())
    assert approval is not None
    assert [entry.text for entry in approval.discussion] == ["careful, peak traffic"]


def test_a_decision_is_never_half_recorded_when_its_round_is_gone(bot: Bot) -> None:
    approval_id, session_id = bot.ask()
    bot.services.stores.redis.delete(keys.round_(session_id))

    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.drain()

    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None
    assert bot.services.stores.approvals.open_ids(session_id) == {approval_id}
    assert [entry.event for entry in bot.services.stores.audit.entries()] == ["request"]


def test_a_failing_listener_answers_the_clicker_instead_of_an_error(bot: Bot) -> None:
    approval_id, session_id = bot.ask()
    opened = bot.open_deny(approval_id, user=APPROVER)
    bot.corrupt(approval_id, session_id)

    claim = bot.click(ids.TAKE_ACTION, approval_id, user=APPROVER)
    assert claim.status == 200
    [said] = bot.slack.calls("response_url")
    assert "not recorded" in said.args["text"]

    modal = bot.submit_deny(approval_id, user=APPROVER, reason="no", view=opened)
    assert modal.status == 200
    assert "not recorded" in json.dumps(modal.json()["errors"])


def test_a_failed_event_is_processed_when_slack_redelivers_it(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        queue = bot.services.stores.jobs
        enqueue = queue.enqueue

        def down(*args: Any, **kwargs: Any) -> None:
            raise redis.ConnectionError("down")

        queue.enqueue = down  # type: ignore[method-assign]
        body = slack_requests.app_mention(user=REQUESTER, channel="C0OPS", text="<@U0BOT> restart checkout")
        assert bot.poster.post_event(body).status == 500  # Slack will redeliver
        queue.enqueue = enqueue  # type: ignore[method-assign]

        assert bot.poster.post_event(body, retry_num=1, timestamp=int(time.time()) - 2).status == 200
        bot.drain()
        assert len(bot.approval_messages()) == 1
