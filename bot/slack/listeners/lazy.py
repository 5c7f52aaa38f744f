"""Listeners whose work may outlast Slack's 3 seconds (opening a modal, asking Slack): acked at once, run lazily."""

from collections.abc import Callable
from typing import Any

from slack_bolt import Ack


def ack_at_once(ack: Ack) -> None:
    """Answer Slack now: the lazy listener does the work after the answer has left."""
    ack()


def lazily(listen: Callable[..., Any], work: Callable[..., None]) -> None:
    """Register ``work`` with ``listen``, run at once after an ack.

    ``listen`` is what ``app.action(...)`` or ``app.command(...)`` returns.
    """
    listen(ack=ack_at_once, lazy=[work])
