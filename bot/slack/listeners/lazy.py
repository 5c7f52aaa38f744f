"""Listeners whose work may outlast Slack's 3 seconds (opening a modal, asking Slack): acked at once, run lazily.

Bolt only logs a lazy listener's failure (the app's error handler never sees it): a Deny click whose modal cannot
open while Slack is down would vanish. A failed click's person is told here instead (``tell_click_failed``).
"""

import logging
from collections.abc import Callable
from typing import Any, cast

from slack_bolt import Ack, BoltRequest
from slack_bolt.kwargs_injection.utils import build_required_kwargs
from slack_bolt.util.utils import get_arg_names_of_callable

from bot.slack.edge.payloads import BlockActions
from bot.slack.listeners.failures import tell_click_failed
from bot.store.queues.outbox import Outbox


def ack_at_once(ack: Ack) -> None:
    """Answer Slack now: the lazy listener does the work after the answer has left."""
    ack()


def lazily(listen: Callable[..., Any], work: Callable[..., None], *, outbox: Outbox) -> None:
    """Register ``work`` with ``listen``, run at once after an ack; a click whose work fails is told so.

    ``listen`` is what ``app.action(...)`` or ``app.command(...)`` returns; ``outbox``: where the word to a clicker
    waits when Slack cannot take it now.
    """

    def run(request: BoltRequest, logger: logging.Logger) -> None:
        names = get_arg_names_of_callable(work)
        arguments = build_required_kwargs(
            logger=logger, required_arg_names=names, request=request, response=None, next_keys_required=False
        )
        try:
            work(**arguments)
        except Exception as error:  # boundary: Bolt would only log it, and the person would never hear of it
            logger.error("type=<%s> | lazy listener failed: %s", request.body.get("type"), error, exc_info=error)
            if request.body.get("type") == "block_actions":
                tell_click_failed(cast(BlockActions, request.body), error, outbox=outbox)

    run.__name__ = run.__qualname__ = work.__name__  # Bolt names the listener it runs in its logs
    listen(ack=ack_at_once, lazy=[run])
