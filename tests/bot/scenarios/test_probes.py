"""The web process's probes over real HTTP: ``/healthz`` while the process lives, ``/readyz`` only while Redis,
the bot's scripts and Slack's answer to the token are all good (503 naming what is not); a Slack that cannot be
reached leaves it ready but degraded (clicks and the API need no Slack call)."""

import time
from hashlib import sha1
from typing import Any

import httpx
import pytest
import redis
from slack_sdk import WebClient

from bot.observe.readiness import Readiness
from bot.services import connect_redis
from bot.store.scripts import EVERY_SCRIPT
from state import RedisServer
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.outage import redis_stopped


def _probe(bot: Bot, path: str) -> tuple[int, Any]:
    answer = httpx.get(bot.url.rstrip("/") + path, timeout=10)
    return answer.status_code, answer.json() if path == "/readyz" else answer.text


def test_readyz_is_ready_when_redis_the_scripts_and_slack_all_answer(bot: Bot) -> None:
    status, body = _probe(bot, "/readyz")
    assert status == 200, body
    assert body == {"status": "ready", "failed": [], "checks": {"redis": "ok", "scripts": "ok", "slack": "ok"}}


def test_readyz_loads_the_scripts_again_after_the_server_lost_them(bot: Bot) -> None:
    bot.services.stores.redis.script_flush()
    assert not any(bot.services.stores.redis.script_exists(*[_sha(text) for text in EVERY_SCRIPT]))
    status, body = _probe(bot, "/readyz")
    assert status == 200, body
    assert all(bot.services.stores.redis.script_exists(*[_sha(text) for text in EVERY_SCRIPT]))


def test_readyz_asks_slack_once_for_many_probes(bot: Bot) -> None:
    asked = len(bot.slack.calls("auth.test"))
    for _ in range(5):
        assert _probe(bot, "/readyz")[0] == 200
    assert len(bot.slack.calls("auth.test")) == asked + 1


@pytest.mark.single_redis  # stops its own server
def test_readyz_names_redis_while_it_is_stopped_and_healthz_stays_up(own_redis: RedisServer) -> None:
    with running_bot(connect_redis(own_redis.url, retry_s=0.3), agent_factory=demo_factory) as bot:
        assert _probe(bot, "/readyz")[0] == 200
        with redis_stopped(own_redis):
            status, body = _probe(bot, "/readyz")
            assert status == 503
            assert body["status"] == "not ready"
            assert body["failed"] == ["redis"]
            assert "ConnectionError" in body["checks"]["redis"]
            assert body["checks"]["scripts"] == "not checked: Redis unreachable"
            assert _probe(bot, "/healthz") == (200, "ok")
        assert _probe(bot, "/readyz")[0] == 200


def test_readyz_names_slack_when_the_token_is_refused(bot: Bot) -> None:
    bot.slack.revoke_token(bot.slack.token)
    status, body = _probe(bot, "/readyz")
    assert status == 503
    assert body["failed"] == ["slack"]
    assert body["checks"]["slack"] == "auth.test: invalid_auth"


def test_readyz_stays_ready_but_degraded_while_slack_refuses_connections(bot: Bot) -> None:
    # Taking every web pod out of the load balancer while only Slack is down would refuse the clicks and API calls
    # that need no Slack call, and queue nothing: readiness is for what the pod itself can serve.
    with bot.slack.refusing():
        status, body = _probe(bot, "/readyz")
        assert _probe(bot, "/healthz") == (200, "ok")
    assert status == 200, body
    assert body["status"] == "degraded"
    assert body["failed"] == []
    assert body["degraded"] == ["slack"]
    assert body["checks"]["slack"].startswith("degraded: Slack unreachable (")


@pytest.mark.parametrize("status", [500, 503, 429])
def test_readyz_stays_ready_but_degraded_while_slack_answers_errors(redis_client: redis.Redis, status: int) -> None:
    with FakeSlack() as slack:
        readiness = Readiness(
            redis_client=redis_client, slack=WebClient(token=slack.token, base_url=slack.url), scripts=EVERY_SCRIPT
        )
        slack.fail_next("auth.test", status=status)
        results = readiness.check()
    assert not any(result.failed for result in results)
    assert [result.name for result in results if result.degraded] == ["slack"]


def test_readyz_waits_for_slack_no_longer_than_its_own_timeout(redis_client: redis.Redis) -> None:
    # A Slack that takes connections and answers nothing held the probe for the client's 30 s: past any probe's
    # timeout, so every pod failed readiness.
    with FakeSlack() as slack:
        readiness = Readiness(
            redis_client=redis_client,
            slack=WebClient(token=slack.token, base_url=slack.url),
            scripts=EVERY_SCRIPT,
            slack_timeout_s=1,
        )
        slack.slow_next("auth.test", 5)
        started = time.monotonic()
        results = readiness.check()
        waited_s = time.monotonic() - started
    assert waited_s < 3
    assert not any(result.failed for result in results)
    assert [result.name for result in results if result.degraded] == ["slack"]


@pytest.mark.parametrize("error", ["invalid_auth", "token_revoked", "account_inactive"])
def test_readyz_is_not_ready_only_when_slack_says_the_token_is_gone(redis_client: redis.Redis, error: str) -> None:
    with FakeSlack() as slack:
        readiness = Readiness(
            redis_client=redis_client, slack=WebClient(token=slack.token, base_url=slack.url), scripts=EVERY_SCRIPT
        )
        slack.error_next("auth.test", error)
        results = readiness.check()
    assert [(result.name, result.detail) for result in results if result.failed] == [("slack", f"auth.test: {error}")]


def test_slacks_answer_is_kept_for_the_cache_time_then_asked_again(redis_client: redis.Redis) -> None:
    now = [0.0]
    with FakeSlack() as slack:
        readiness = Readiness(
            redis_client=redis_client,
            slack=WebClient(token=slack.token, base_url=slack.url),
            scripts=EVERY_SCRIPT,
            slack_cache_s=30,
            clock=lambda: now[0],
        )
        assert not any(result.failed for result in readiness.check())
        slack.revoke_token(slack.token)
        now[0] = 29.0
        assert not any(result.failed for result in readiness.check())
        now[0] = 30.0
        assert [result.name for result in readiness.check() if result.failed] == ["slack"]


def _sha(text: str) -> str:
    return sha1(text.encode()).hexdigest()
