"""A web process whose one long-poll slot is taken (``API_MAX_WAITS=1``), so that a client's first wait is refused
with 429: for the clients that must wait ``Retry-After`` and ask again (the recipes' client, the MCP server)."""

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
import redis

from bot.render import action_ids as ids
from tests.bot.support.api_client import api_caller, until_waits_held
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER


@contextmanager
def busy_bot(redis_client: redis.Redis) -> Iterator[Bot]:
    """The bot with one long-poll slot, held by another client's wait on its own pending request."""
    with (
        running_bot(redis_client, agent_factory=demo_factory, api_max_waits=1) as bot,
        api_caller(bot.services, bot.url, name="other-agent") as other,
        ThreadPoolExecutor(1) as pool,
    ):
        held = other.ask(idempotency_key="holds-the-slot")
        assert held.status_code == 201, held.text
        bot.drain()
        holding = pool.submit(other.get, held.json()["id"], wait="30s")
        until_waits_held(bot.services, 1)
        yield bot
        holding.result(timeout=40)  # it ends when its request is decided (the person approves everything)


@contextmanager
def approving_after_a_refusal(
    bot: Bot, caplog: pytest.LogCaptureFixture, client: str, *, act: Callable[[str], Any] | None = None
) -> Iterator[None]:
    """A person approves every request in Slack (or does ``act`` on it), but only once a wait of ``client`` was
    refused (429).

    No decision before that refusal: else the client's wait would find its request decided and never be refused.
    """
    caplog.set_level(logging.WARNING, logger="bot.api.app")
    refused = threading.Event()

    def approve(approval_id: str) -> None:
        if not refused.is_set():
            _wait_for(lambda: f"long-poll of {client} refused" in caplog.text)
            refused.set()
        if act is not None:
            act(approval_id)
        else:
            bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)

    with person_in_slack(bot, approve):
        yield
    assert refused.is_set(), f"no wait of {client} was refused"


def _wait_for(condition: Callable[[], bool], timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)
