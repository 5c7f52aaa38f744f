"""Clicks on "Approve and allow": the buttons that approve a call and grant a standing approval for a while."""

from typing import Any

from bot.render import action_ids as ids
from loopback_slack import slack_requests
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL


def grant_buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The "Approve and allow" buttons of an approval message, one a duration."""
    return [
        element
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element["action_id"] == ids.APPROVE_AND_ALLOW_ACTION
    ]


def approve_and_allow(bot: Bot, value: str, *, user: str = APPROVER) -> None:
    """``user`` clicks the "Approve and allow" button carrying ``value`` on the latest approval message."""
    message = bot.approval_messages()[-1]
    click = slack_requests.block_actions(
        action_id=ids.APPROVE_AND_ALLOW_ACTION,
        user_id=user,
        channel_id=CHANNEL,
        message_ts=message["ts"],
        thread_ts=message.get("thread_ts"),
        value=value,
        blocks=message["blocks"],
    )
    assert bot.poster.post_action(click).status == 200
