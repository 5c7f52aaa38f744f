"""``/metrics`` over real HTTP moves as a request goes through the bot: pending approvals by policy and age, the
decision by outcome and source, the click's latency, time to decision, jobs, the outbox, Slack's and Redis' errors."""

from pathlib import Path

import pytest
import redis

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.services import connect_redis
from state import RedisServer
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER
from tests.bot.support.policy_files import POLICIES
from tests.bot.support.scrapes import Scrape
from tests.outage import redis_stopped

_APPROVED_BY_BUTTON = {"outcome": "approve", "source": "button"}


def _scrape(bot: Bot) -> Scrape:
    return Scrape(bot.url.rstrip("/") + "/metrics")


def test_a_request_and_its_approval_move_the_metrics(bot: Bot) -> None:
    before = _scrape(bot)
    assert before.value("signoff_state_scrape_ok") == 1
    assert before.value("signoff_pending_approvals") == 0

    approval_id, _session_id = bot.ask()
    asked = _scrape(bot)
    assert asked.value("signoff_pending_approvals", {"policy": "default", "age": "lt_5m"}) == 1
    assert 0 <= asked.value("signoff_oldest_pending_approval_seconds") < 300
    started = {"kind": "start", "outcome": "done"}
    assert asked.value("signoff_jobs_total", started) == before.value("signoff_jobs_total", started) + 1
    assert asked.value("signoff_job_seconds_count", {"kind": "start"}) >= 1

    assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
    decided = _scrape(bot)  # before the worker ran: the outbox holds the message's update
    assert decided.value("signoff_pending_approvals") == 0
    assert decided.value("signoff_outbox_depth") >= 1
    assert decided.value("signoff_decisions_total", _APPROVED_BY_BUTTON) == (
        before.value("signoff_decisions_total", _APPROVED_BY_BUTTON) + 1
    )
    assert decided.value("signoff_click_seconds_count") == before.value("signoff_click_seconds_count") + 1
    waits = ("signoff_time_to_decision_seconds_count", {"source": "button"})
    assert decided.value(*waits) == before.value(*waits) + 1

    bot.drain()
    after = _scrape(bot)
    assert after.value("signoff_outbox_depth") == 0
    resumed = {"kind": "resume", "outcome": "done"}
    assert after.value("signoff_jobs_total", resumed) == before.value("signoff_jobs_total", resumed) + 1


def test_a_slack_error_is_counted_by_method_and_error_and_its_retry_too(bot: Bot) -> None:
    failed = {"method": "chat.postMessage", "error": "fatal_error"}
    before = _scrape(bot)
    bot.slack.error_next("chat.postMessage", "fatal_error")
    bot.mention("restart checkout")
    bot.drain()
    after = _scrape(bot)
    assert (
        after.value("signoff_slack_api_errors_total", failed)
        == before.value("signoff_slack_api_errors_total", failed) + 1
    )
    retried = {"reason": "slack_error"}
    assert (
        after.value("signoff_outbox_retries_total", retried)
        == before.value("signoff_outbox_retries_total", retried) + 1
    )


@pytest.mark.single_redis  # stops its own server
def test_redis_errors_are_counted_and_the_state_is_absent_not_wrong_while_redis_is_down(
    own_redis: RedisServer,
) -> None:
    with running_bot(connect_redis(own_redis.url, retry_s=0.3), agent_factory=demo_factory) as bot:
        before = _scrape(bot)
        with redis_stopped(own_redis):
            down = _scrape(bot)
        assert down.value("signoff_state_scrape_ok") == 0
        assert "signoff_outbox_depth" not in {family.name for family in down.families}
        assert down.value("signoff_redis_errors_total", {"error": "ConnectionError"}) > before.value(
            "signoff_redis_errors_total", {"error": "ConnectionError"}
        )
        assert _scrape(bot).value("signoff_state_scrape_ok") == 1


def test_an_escalation_and_an_expiry_move_the_metrics_and_pending_ages(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    policy = POLICIES / "ladder_and_expiry.yml"
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as bot:
        before = _scrape(bot)
        bot.ask()
        young = {"policy": "service-changes", "age": "lt_5m"}
        assert _scrape(bot).value("signoff_pending_approvals", young) == 1

        clock.advance(10 * 60)
        bot.drain()
        escalated = _scrape(bot)
        assert escalated.value("signoff_pending_approvals", {"policy": "service-changes", "age": "5m_1h"}) == 1
        assert (
            escalated.value("signoff_escalation_steps_total", {"kind": "escalate"})
            == before.value("signoff_escalation_steps_total", {"kind": "escalate"}) + 1
        )

        clock.advance(60 * 60)
        bot.drain()
        expired = _scrape(bot)
        assert expired.value("signoff_pending_approvals") == 0
        assert (
            expired.value("signoff_escalation_steps_total", {"kind": "expire"})
            == before.value("signoff_escalation_steps_total", {"kind": "expire"}) + 1
        )
        by_expiry = {"outcome": "expired", "source": "expiry"}
        assert (
            expired.value("signoff_decisions_total", by_expiry)
            == before.value("signoff_decisions_total", by_expiry) + 1
        )
        waited = ("signoff_time_to_decision_seconds_bucket", {"source": "expiry", "le": "3600.0"})
        assert expired.value(*waited) == before.value(*waited)  # it waited 70 minutes: above that bucket
        assert (
            expired.value("signoff_time_to_decision_seconds_count", {"source": "expiry"})
            == before.value("signoff_time_to_decision_seconds_count", {"source": "expiry"}) + 1
        )
