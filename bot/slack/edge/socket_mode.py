"""Socket Mode: Bolt's builtin handler, with every envelope of a shape it cannot read acked and dropped.

Slack redelivers an envelope until it is acked. Bolt builds its request (reading ``user``, ``channel``,
``team`` of the payload) before the app runs and acks nothing if that raises, so an envelope of an
odd shape would come back, and fail the same way, for ever. Such an envelope is checked first with
``bot.slack.edge.payload_shape`` (the HTTP edge answers the same shapes with a 400), logged and acked. An event
whose listener failed is still left unacked for Slack to redeliver (see ``bot.slack.listeners.failures``).
"""

import logging

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk.socket_mode import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.slack.edge.payload_shape import payload_problem

logger = logging.getLogger(__name__)


class CheckedSocketModeHandler(SocketModeHandler):
    """``SocketModeHandler`` that acks and drops, with a log line, each envelope Bolt could not read."""

    def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        """Hand ``req`` to Bolt if its payload has a shape Bolt and the listeners read; else ack it here."""
        problem = payload_problem(req.payload)
        if problem is None:
            try:
                super().handle(client, req)
                return
            except (AttributeError, KeyError, IndexError, TypeError) as error:  # a shape payload_problem missed
                logger.exception("envelope_id=<%s> | Bolt could not read the payload", req.envelope_id)
                problem = f"unreadable payload ({type(error).__name__})"
        logger.warning("envelope_id=<%s> type=<%s> | dropped: %s", req.envelope_id, req.type, problem)
        client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
