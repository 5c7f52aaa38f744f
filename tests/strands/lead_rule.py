"""The rule the native-interrupt tests are judged by: only the lead may approve ``delete_files`` ("deletions")."""

import json
from typing import Any

import redis

from bot.render import action_ids as ids
from tests.bot.support.harness import Bot, is_decided
from tests.bot.support.people import APPROVER
from tests.strands.native import completions

LEAD = "U0LEAD"


def blocks_text(message: dict[str, Any]) -> str:
    """An approval message's blocks, as one string to look for words in."""
    return json.dumps(message["blocks"])


def the_approval_asked_for(bot: Bot, request: str) -> str:
    """Mention the bot with ``request``; the text of the one approval message it posted."""
    bot.mention(request)
    bot.drain()
    [message] = bot.approval_messages()
    return blocks_text(message)


def deleted_once_the_lead_approves(bot: Bot, redis_client: redis.Redis) -> None:
    """Ask for ``delete /tmp/a``: one approval message names the call, its argument and the deletions rule; an
    approver's click decides nothing under that rule; the lead's runs ``delete_files`` once."""
    text = the_approval_asked_for(bot, "delete /tmp/a")
    assert "Approval needed: delete_files" in text
    assert "/tmp/a" in text
    assert "deletions" in text

    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
    bot.drain()
    assert not is_decided(bot.approval_messages()[0])
    assert completions(redis_client, "delete_files") == 0

    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=LEAD).status == 200
    bot.drain()
    assert completions(redis_client, "delete_files") == 1
