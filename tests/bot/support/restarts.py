"""The bot restarted between an interrupt and its click: one process asks, a new one is clicked."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis

from bot.render import action_ids as ids
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER, CHANNEL


@contextmanager
def approved_after_a_restart(
    redis_client: redis.Redis, agent_factory: Callable[..., Any], request: str = "restart checkout"
) -> Iterator[tuple[Bot, dict[str, Any]]]:
    """Ask with one bot process, then approve with a new one; yield it, settled, and the approval message.

    The new process's fake Slack has never seen the message: it is given the one the old process posted.
    """
    with running_bot(redis_client, agent_factory=agent_factory) as first:
        assert first.mention(request).status == 200
        first.drain()
        message = first.approval_messages()[0]
        approval_id = first.approval_id()

    with running_bot(redis_client, agent_factory=agent_factory) as restarted:
        restarted.slack.add_message(
            CHANNEL,
            user="U0BOT",
            text=message["text"],
            ts=message["ts"],
            thread_ts=str(message["thread_ts"]),
            blocks=message["blocks"],
        )
        assert restarted.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
        restarted.drain()
        yield restarted, message
