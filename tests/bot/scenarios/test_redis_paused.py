"""A Redis that stops answering without closing its connections (SIGSTOP: a partition, a stuck node, a failover in
progress look the same from a client): every request of the web process gets its answer within Slack's window, the
probes say so within ``REDIS_RETRY_SECONDS``, and what the server runs once it resumes records nothing its caller
was told is not recorded."""

import json
import time

import httpx
import pytest
import redis

from bot.render import action_ids as ids
from bot.services import DEFAULT_RETRY_S, DEFAULT_TIMEOUT_S, connect_redis
from bot.store.queues.worker_heartbeats import WorkerHeartbeats
from state import RedisServer
from tests.bot.support.doomed_worker import wait_until, worker_process
from tests.bot.support.harness import Bot, demo_factory, running_bot, waiting_on_a_warm_bot
from tests.bot.support.people import APPROVER
from tests.bot.support.processes import run_bot
from tests.bot.support.scrapes import Scrape
from tests.outage import redis_paused

pytestmark = pytest.mark.single_redis  # each test pauses its own server

_SLACK_WINDOW_S = 3.0
"""Slack shows the person an error when a request gets no answer within this."""
_NOT_RECORDED = "Not recorded"


def _bot_client(server: RedisServer) -> redis.Redis:
    return connect_redis(server.url, retry_s=DEFAULT_RETRY_S)  # the settings' defaults, as a deployment runs


def _assert_nothing_recorded(bot: Bot, approval_id: str, session_id: str) -> None:
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None
    events = [entry.event for entry in bot.services.stores.audit.entries() if entry.session_id == session_id]
    assert events == ["request"]


def _settle(server: RedisServer) -> None:
    """Wait until the resumed server has run what it was sent while paused (it answers in order)."""
    connect_redis(server.url, retry_s=DEFAULT_RETRY_S).ping()
    time.sleep(0.2)  # the commands of connections the client closed are read after their data: let them run


def test_a_click_while_redis_answers_nothing_is_told_in_time_and_the_server_runs_it_later_to_no_effect(
    own_redis: RedisServer,
) -> None:
    with running_bot(_bot_client(own_redis), agent_factory=demo_factory) as bot:
        approval_id, session_id = waiting_on_a_warm_bot(bot)
        with redis_paused(own_redis):
            started = time.monotonic()
            click = bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
            answered_s = time.monotonic() - started
            assert click.status == 200
            assert answered_s < _SLACK_WINDOW_S
            [said] = bot.slack.wait_for("response_url")
            assert _NOT_RECORDED in said.args["text"]
            time.sleep(DEFAULT_TIMEOUT_S)  # the click's script waits in the paused server past its deadline
        _settle(own_redis)
        _assert_nothing_recorded(bot, approval_id, session_id)
        assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
        decided = bot.services.stores.approvals.find(approval_id)
        assert decided is not None
        assert decided.decision is not None


def test_a_deny_form_submitted_while_redis_answers_nothing_is_refused_in_time_and_never_recorded(
    own_redis: RedisServer,
) -> None:
    with running_bot(_bot_client(own_redis), agent_factory=demo_factory) as bot:
        approval_id, session_id = waiting_on_a_warm_bot(bot)
        opened = bot.open_deny(approval_id, user=APPROVER)
        with redis_paused(own_redis):
            started = time.monotonic()
            modal = bot.submit_deny(approval_id, user=APPROVER, reason="not now", view=opened)
            assert time.monotonic() - started < _SLACK_WINDOW_S
            assert modal.status == 200
            assert _NOT_RECORDED in json.dumps(modal.json()["errors"])
            time.sleep(DEFAULT_TIMEOUT_S)
        _settle(own_redis)
        _assert_nothing_recorded(bot, approval_id, session_id)


def _get(bot: Bot, path: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    answer = httpx.get(bot.url.rstrip("/") + path, timeout=30)
    return answer, time.monotonic() - started


def test_the_probes_and_metrics_answer_within_the_retry_time_while_redis_answers_nothing(
    own_redis: RedisServer,
) -> None:
    with running_bot(_bot_client(own_redis), agent_factory=demo_factory) as bot:
        assert _get(bot, "/readyz")[0].status_code == 200
        with redis_paused(own_redis):
            ready, ready_s = _get(bot, "/readyz")
            assert ready.status_code == 503
            assert ready.json()["failed"] == ["redis"]
            assert ready.json()["checks"]["redis"] == "TimeoutError"
            assert ready_s < DEFAULT_RETRY_S + 0.5
            health, _took_s = _get(bot, "/healthz")
            assert (health.status_code, health.text) == (200, "ok")
            started = time.monotonic()
            scrape = Scrape(bot.url.rstrip("/") + "/metrics")
            assert time.monotonic() - started < DEFAULT_RETRY_S + 0.5
            assert scrape.value("signoff_state_scrape_ok") == 0
            assert scrape.value("signoff_redis_errors_total", {"error": "TimeoutError"}) >= 1
        assert _get(bot, "/readyz")[0].status_code == 200


def test_worker_health_exits_2_within_the_retry_time_while_redis_answers_nothing(own_redis: RedisServer) -> None:
    with redis_paused(own_redis):
        started = time.monotonic()
        ran = run_bot(["worker-health"], REDIS_URL=own_redis.url)
        took_s = time.monotonic() - started
    assert ran.returncode == 2, ran.stderr
    assert "REDIS_URL" in ran.stderr
    assert took_s < DEFAULT_RETRY_S + 10  # the interpreter's own start is most of it


def test_one_command_waits_one_timeout_for_a_paused_server_and_rides_out_a_stopped_one(
    own_redis: RedisServer,
) -> None:
    client = connect_redis(own_redis.url, retry_s=DEFAULT_RETRY_S)
    assert client.ping()
    with redis_paused(own_redis):
        started = time.monotonic()
        with pytest.raises(redis.TimeoutError):
            client.ping()
        took_s = time.monotonic() - started
    # One attempt of REDIS_TIMEOUT_SECONDS: a second one could not end within REDIS_RETRY_SECONDS.
    assert DEFAULT_TIMEOUT_S <= took_s < DEFAULT_RETRY_S
    assert client.ping()


def test_a_worker_process_lives_through_a_pause_and_answers_the_next_mention(own_redis: RedisServer) -> None:
    with (
        running_bot(_bot_client(own_redis), agent_factory=demo_factory) as bot,
        worker_process(bot, own_redis.url) as worker,
    ):
        heartbeats = WorkerHeartbeats(bot.services.stores.redis, beat_every_s=1)
        wait_until(lambda: bool(heartbeats.live()), "the worker's first heartbeat")  # up: in its loops' reads
        with redis_paused(own_redis):
            time.sleep(DEFAULT_RETRY_S + DEFAULT_TIMEOUT_S + 0.5)  # every loop's step fails meanwhile
            assert worker.poll() is None
        bot.mention("logs for checkout")
        wait_until(lambda: any("502" in text for text in bot.texts_posted()), "the worker's answer")
        assert worker.poll() is None
