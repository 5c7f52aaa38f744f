"""A person answering a question of options in the loopback Slack: a button clicked, or a select sent."""

from typing import Any

from bot.render import action_ids as ids
from loopback_slack import slack_requests
from loopback_slack.slack_requests import PostResult
from tests.bot.support.harness import Bot
from tests.bot.support.people import CHANNEL


def actions_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    [actions] = [block for block in message["blocks"] if block["type"] == "actions"]
    return list(actions["elements"])


def click_option(bot: Bot, message: dict[str, Any], index: int, *, user: str, value: str | None = None) -> PostResult:
    """``user`` clicks the button of option ``index`` (its value as shown, unless ``value`` bends it)."""
    action_id = f"{ids.CHOOSE_PREFIX}{index}"
    shown = next(element["value"] for element in actions_of(message) if element["action_id"] == action_id)
    payload = slack_requests.block_actions(
        action_id=action_id,
        user_id=user,
        channel_id=CHANNEL,
        message_ts=message["ts"],
        thread_ts=message.get("thread_ts"),
        value=value if value is not None else shown,
        blocks=message["blocks"],
    )
    return bot.poster.post_action(payload)


def send_chosen(
    bot: Bot, message: dict[str, Any], values: list[str], *, user: str, forged: str = "multi_static_select"
) -> PostResult:
    """``user`` chooses the options of these values in the message's select, then clicks Send answer.

    On a message without them (its options are buttons), the select and the button are forged (``forged``: the
    select's type), as a hostile client could send them.
    """
    elements = actions_of(message)
    select = next((element for element in elements if element["action_id"] == ids.CHOICE_SELECT), {"type": forged})
    value = next(
        (element["value"] for element in elements if element["action_id"] == ids.SEND_CHOICE_ACTION),
        next(element["value"] for element in elements if element["action_id"] == ids.DISCUSS_ACTION),
    )
    block_id = next(block["block_id"] for block in message["blocks"] if block["type"] == "actions")
    options = [{"text": {"type": "plain_text", "text": each}, "value": each} for each in values]
    if select["type"] == "multi_static_select":
        held: dict[str, Any] = {"type": select["type"], "selected_options": options}
    else:
        held = {"type": select["type"], "selected_option": options[0] if options else None}
    payload = slack_requests.block_actions(
        action_id=ids.SEND_CHOICE_ACTION,
        user_id=user,
        channel_id=CHANNEL,
        message_ts=message["ts"],
        thread_ts=message.get("thread_ts"),
        value=value,
        block_id=block_id,
        blocks=message["blocks"],
    )
    payload["state"] = {"values": {block_id: {ids.CHOICE_SELECT: held}}}
    return bot.poster.post_action(payload)
