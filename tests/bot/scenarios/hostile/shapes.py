"""What the odd- and named-shape scenarios share: a click, a deny or a thread reply with fields changed."""

from collections.abc import Callable, Mapping
from typing import Any

from bot.domain.records import Decision
from bot.render import action_ids as ids
from loopback_slack import slack_requests
from loopback_slack.slack_requests import PostResult
from tests.bot.support.harness import Bot, deny_submission
from tests.bot.support.people import APPROVER, CHANNEL


def reply_in_a_new_thread(bot: Bot, changes: Mapping[str, Any]) -> tuple[str, str, PostResult]:
    """Ask for an approval, then post "approve: ok" in its thread with ``changes`` made to the event.

    Returns:
        The approval's id, its thread's ts, and the bot's answer to the reply.
    """
    approval_id, _ = bot.ask()
    thread_ts = str(bot.approval_messages()[-1]["thread_ts"])
    body = slack_requests.message_event(channel=CHANNEL, text="approve: ok", user=APPROVER, thread_ts=thread_ts)
    body["event"].update(changes)
    result = bot.poster.post_event(body)
    bot.drain()
    return approval_id, thread_ts, result


def click_with(bot: Bot, change: Callable[[dict[str, Any]], object]) -> tuple[str, PostResult]:
    """Ask for an approval, then click Approve on it as the approver, ``change`` made to the click's payload.

    Returns:
        The approval's id and the bot's answer to the click.
    """
    approval_id, _ = bot.ask()
    payload = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    change(payload)
    result = bot.poster.post_action(payload)
    bot.drain()
    return approval_id, result


def deny_with(bot: Bot, change: Callable[[dict[str, Any]], object]) -> tuple[str, PostResult]:
    """Ask for an approval, then submit its deny modal with ``change`` made to the submission.

    Returns:
        The approval's id and the bot's answer to the submission.
    """
    approval_id, _ = bot.ask()
    payload = deny_submission(approval_id)
    change(payload)
    result = bot.poster.post_view_submission(payload)
    bot.drain()
    return approval_id, result


def decision_of(bot: Bot, approval_id: str) -> Decision | None:
    """The decision on an approval that must exist."""
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    return approval.decision
