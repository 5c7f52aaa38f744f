"""A click's path: one verifier at the edge, and an Approve click is one Redis round trip before its answer."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis
from slack_bolt.middleware.request_verification import RequestVerification

from bot.render import action_ids as ids
from bot.render import messages
from bot.slack.app import build_app
from bot.store import keys
from tests.bot.support.agents import two_gates_agent
from tests.bot.support.harness import APPROVER, Bot, running_bot

_MARK = "test-click-path-"


@contextmanager
def commands_sent(client: redis.Redis) -> Iterator[list[str]]:
    """The commands clients send to Redis in the block (Redis MONITOR), but the ones scripts run inside Redis."""
    commands: list[str] = []
    ready, done = threading.Event(), threading.Event()

    def watch() -> None:
        started = False
        with client.monitor() as monitor:  # type: ignore[no-untyped-call]
            ready.set()
            for command in monitor.listen():
                text = str(command.get("command", ""))
                if text == f"ECHO {_MARK}start":
                    started = True
                elif text == f"ECHO {_MARK}end":
                    done.set()
                    return
                elif started and command.get("client_type") != "lua":
                    commands.append(text)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert ready.wait(5)
    client.echo(f"{_MARK}start")
    yield commands
    client.echo(f"{_MARK}end")
    assert done.wait(5)


def _two_requests(bot: Bot) -> None:
    bot.mention("restart api and search")
    bot.drain()


@pytest.mark.single_redis  # counted with MONITOR, which watches one server (a cluster has one per master)
def test_an_approve_click_is_one_redis_round_trip_before_its_answer(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=two_gates_agent) as bot:
        _two_requests(bot)
        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(0), user=APPROVER).status == 200  # caches now warm
        second = bot.approval_id(1)

        with commands_sent(bot.services.redis) as commands:
            assert bot.click(ids.APPROVE_ACTION, second, user=APPROVER).status == 200

        assert [command.split()[0] for command in commands] == ["EVALSHA"]
        session_id = bot.services.approvals.session_of(second)
        assert session_id is not None
        approval = bot.services.approvals.get(session_id, second)
        assert approval is not None
        assert approval.decision is not None
        assert approval.decision.decided_by == APPROVER


def test_a_replayed_approve_click_is_refused_and_changes_nothing(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
    shard = keys.shard_of(bot.services.approvals.session_of(bot.approval_id()) or "")
    audit_before = bot.services.redis.xlen(keys.audit(shard))
    outbox_before = bot.services.redis.hlen(keys.outbox_entries(shard))

    assert bot.poster.replay().status == 409

    assert bot.services.redis.xlen(keys.audit(shard)) == audit_before
    assert bot.services.redis.hlen(keys.outbox_entries(shard)) == outbox_before


def test_a_replayed_refused_click_is_refused_as_a_replay(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    requester_click = bot.click(ids.APPROVE_ACTION, bot.approval_id(), user="U0REQUESTER")  # self-approval
    assert requester_click.status == 200

    assert bot.poster.replay().status == 409


def _with_value(payload: dict[str, Any], value: str) -> dict[str, Any]:
    return {**payload, "actions": [{**payload["actions"][0], "value": value}]}


def test_a_button_naming_another_session_decides_nothing(bot: Bot) -> None:
    bot.mention("restart checkout")
    bot.drain()
    approval_id = bot.approval_id()
    payload = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    forged = ids.button_value(approval_id, "T0TEST:C0OTHER:1700000000.000100")

    assert bot.poster.post_action(_with_value(payload, forged)).status == 200
    bot.drain()

    session_id = bot.services.approvals.session_of(approval_id)
    assert session_id is not None
    approval = bot.services.approvals.get(session_id, approval_id)
    assert approval is not None
    assert approval.decision is None
    assert bot.ephemeral_texts(APPROVER)[-1] == messages.unknown_approval()


def test_bolt_does_not_verify_again_what_the_guard_verified(bot: Bot) -> None:
    app = build_app(bot.services.settings, bot.services, token_verification=False)
    middleware = app._middleware_list

    assert not any(isinstance(each, RequestVerification) for each in middleware)
