"""The requests Slack sends to an app's Request URL, and a poster that signs them and sends them over real HTTP.

The one builder of Slack's requests: the sandbox sends what its people do through it, and the tests and benches
drive the bot with it. The builders return plain dicts shaped like Slack's: ``event_callback`` envelopes
(``app_mention``, ``message``, ``app_home_opened``) and ``url_verification`` (``events``), ``block_actions`` and
``view_submission`` interaction payloads (``interactions``), slash-command form fields (``commands``); ``team`` holds
the ids they carry. ``SignedPoster`` (``poster``) encodes them the way Slack does, signs them with the current time
(``sign``, slack_sdk's signer) and POSTs them; ``send`` POSTs a body with exactly the headers given, for requests Slack
would not send (forged, stale, replayed), which a subclass may make.
"""

from loopback_slack.slack_requests.commands import slash_command
from loopback_slack.slack_requests.events import (
    app_home_opened,
    app_mention,
    event_callback,
    message_event,
    message_events,
    url_verification,
)
from loopback_slack.slack_requests.interactions import block_actions, home_block_actions, view_submission
from loopback_slack.slack_requests.poster import (
    USER_AGENT,
    PostResult,
    SignedPoster,
    encode_command,
    encode_event,
    encode_payload,
    sign,
)
from loopback_slack.slack_requests.team import DEFAULT_TEAM, TEAM_ID, Team, new_trigger_id

__all__ = [
    "DEFAULT_TEAM",
    "TEAM_ID",
    "USER_AGENT",
    "PostResult",
    "SignedPoster",
    "Team",
    "app_home_opened",
    "app_mention",
    "block_actions",
    "encode_command",
    "encode_event",
    "encode_payload",
    "event_callback",
    "home_block_actions",
    "message_event",
    "message_events",
    "new_trigger_id",
    "sign",
    "slash_command",
    "url_verification",
    "view_submission",
]
