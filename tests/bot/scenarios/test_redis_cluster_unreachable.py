"""A Redis Cluster that no node of answers (every node paused, or killed) is an outage like one server's: a click is
told "not recorded" in Slack's window and nothing is recorded, the probes and ``/metrics`` answer within
``REDIS_RETRY_SECONDS``, the worker lives through it and serves on once the cluster is back, and an operator command
ends with one line naming ``REDIS_URL``.

redis-py raises ``RedisClusterUnreachableError`` there, which is no ``redis.RedisError``, and refreshes its map of the
cluster by asking each node in turn, a whole timeout each: ``bot.store.cluster_client`` answers for both.
"""

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import cast

import httpx
import pytest

from bot.render import action_ids as ids
from bot.services import DEFAULT_RETRY_S, DEFAULT_TIMEOUT_S, connect_redis
from bot.store import keys
from bot.store.queues.worker_heartbeats import WorkerHeartbeats
from state.redis_cluster import RedisClusterServers
from tests.bot.support.doomed_worker import wait_until, worker_process
from tests.bot.support.harness import Bot, demo_factory, running_bot, waiting_on_a_warm_bot
from tests.bot.support.people import APPROVER
from tests.bot.support.processes import run_bot
from tests.bot.support.scrapes import Scrape
from tests.outage import cluster_down, cluster_paused

Outage = Callable[[RedisClusterServers], AbstractContextManager[None]]
OUTAGES = pytest.mark.parametrize("outage", [cluster_paused, cluster_down], ids=["paused", "down"])

_SLACK_WINDOW_S = 3.0
"""Slack shows the person an error when a request gets no answer within this."""
_WITHIN_S = DEFAULT_RETRY_S + 0.5
"""What a probe may take while Redis answers nothing: ``REDIS_RETRY_SECONDS``, and a margin for two busy cores."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisClusterServers]:
    """A cluster of this module's own: its tests stop every node of it."""
    with RedisClusterServers(masters=3) as servers:
        yield servers


@pytest.fixture
def bot(cluster: RedisClusterServers) -> Iterator[Bot]:
    """The bot on the cluster, its client built as a deployment's (the settings' retry and timeout)."""
    client = connect_redis(cluster.url, retry_s=DEFAULT_RETRY_S)
    client.flushall(target_nodes="primaries")
    with running_bot(client, agent_factory=demo_factory) as running:
        yield running
    client.close()


def _get(bot: Bot, path: str) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    answer = httpx.get(bot.url.rstrip("/") + path, timeout=30)
    return answer, time.monotonic() - started


@OUTAGES
def test_a_click_while_no_node_answers_is_told_in_time_that_nothing_was_recorded(
    bot: Bot, cluster: RedisClusterServers, outage: Outage
) -> None:
    approval_id, session_id = waiting_on_a_warm_bot(bot)
    with outage(cluster):
        for attempt in range(2):  # the second finds the refresh of the cluster's layout the first asked for
            started = time.monotonic()
            click = bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
            answered_s = time.monotonic() - started
            assert click.status == 200
            assert answered_s < _SLACK_WINDOW_S, attempt
            said = bot.slack.wait_for("response_url", count=attempt + 1)
            # The outage's words, not a failure's ("Your click was not recorded: RedisClusterUnreachableError").
            assert "Not recorded: Signoff cannot reach its database" in said[-1].args["text"]
        time.sleep(DEFAULT_TIMEOUT_S)  # a paused node holds the click's script past its deadline
    connect_redis(cluster.url, retry_s=DEFAULT_RETRY_S).ping()
    time.sleep(0.2)  # what the resumed nodes were sent runs now
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None
    events = [entry.event for entry in bot.services.stores.audit.entries() if entry.session_id == session_id]
    assert events == ["request"]
    assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
    decided = bot.services.stores.approvals.find(approval_id)
    assert decided is not None
    assert decided.decision is not None


@OUTAGES
def test_the_probes_and_metrics_answer_within_the_retry_time_while_no_node_answers(
    bot: Bot, cluster: RedisClusterServers, outage: Outage
) -> None:
    assert _get(bot, "/readyz")[0].status_code == 200
    with outage(cluster):
        for _ in range(2):  # the second waited for a refresh asking each silent node in turn: 4 s
            ready, ready_s = _get(bot, "/readyz")
            assert ready.status_code == 503, ready.text
            assert ready.json()["failed"] == ["redis"]
            assert ready.json()["checks"]["redis"] in ("TimeoutError", "ConnectionError")
            assert ready_s < _WITHIN_S
            health, _took_s = _get(bot, "/healthz")
            assert (health.status_code, health.text) == (200, "ok")
            started = time.monotonic()
            scrape = Scrape(bot.url.rstrip("/") + "/metrics")
            assert time.monotonic() - started < _WITHIN_S
            assert scrape.value("signoff_state_scrape_ok") == 0
    wait_until(lambda: _get(bot, "/readyz")[0].status_code == 200, "ready again")


@OUTAGES
def test_a_worker_process_lives_through_it_and_answers_the_next_mention(
    bot: Bot, cluster: RedisClusterServers, outage: Outage, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"  # a file: a worker logging into a full pipe would block
    with worker_process(bot, cluster.url, stderr_to=log, WORKER_HEARTBEAT_SECONDS="1") as worker:
        heartbeats = WorkerHeartbeats(bot.services.stores.redis, beat_every_s=1)
        wait_until(lambda: bool(heartbeats.live()), "the worker's first heartbeat")
        with outage(cluster):
            time.sleep(DEFAULT_RETRY_S + DEFAULT_TIMEOUT_S + 0.5)  # every loop's step fails meanwhile
            assert worker.poll() is None
        back = time.time()
        bot.mention("logs for checkout")
        try:
            wait_until(lambda: any("502" in text for text in bot.texts_posted()), "the worker's answer", timeout_s=30)
            # Its heartbeat thread beats again: it did not die of the outage.
            wait_until(lambda: any(beat > back for beat in _beats(bot)), "a heartbeat after the outage")
        except AssertionError as failed:
            raise AssertionError(f"{failed}; the worker's log ends:\n{log.read_text()[-4000:]}") from None
        assert worker.poll() is None
    assert "Exception in thread" not in log.read_text(), log.read_text()[-4000:]


def _beats(bot: Bot) -> list[float]:
    """When each worker last beat (unix seconds)."""
    beats = cast(
        list[tuple[bytes, float]], bot.services.stores.redis.zrange(keys.WORKER_HEARTBEATS, 0, -1, withscores=True)
    )
    return [score / 1000 for _member, score in beats]


@OUTAGES
@pytest.mark.parametrize("command", [["pending"], ["worker"]])
def test_a_command_or_a_process_starting_ends_with_one_line_naming_redis_url(
    cluster: RedisClusterServers, outage: Outage, command: list[str]
) -> None:
    url = cluster.url
    with outage(cluster):
        started = time.monotonic()
        # REDIS_CLUSTER=yes: a cluster client without asking the server first, which reads the layout at once.
        ran = run_bot(command, REDIS_URL=url, REDIS_CLUSTER="yes", SLACK_BOT_TOKEN="xoxb-0-unused")
        took_s = time.monotonic() - started
    assert ran.returncode == 2, ran.stderr
    [line] = ran.stderr.strip().splitlines()  # not redis-py's traceback
    assert line.startswith("signoff: REDIS_URL: cannot use Redis at"), line
    assert took_s < DEFAULT_RETRY_S + 10  # the interpreter's own start is most of it
