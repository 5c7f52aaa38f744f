"""An in-memory Slack Web API on a loopback port: the sandbox's Slack stand-in and the tests' fake Slack.

``FakeSlack`` is a context manager; ``fake.url`` (``http://127.0.0.1:<port>/api/``) is what ``slack_sdk.WebClient``
takes as ``base_url``. It answers the methods the bot uses with the shapes ``slack_sdk`` expects, keeps the resulting
workspace state (messages with updates applied, ephemerals, views), records every call, and can inject failures:
HTTP 429 with ``Retry-After``, HTTP 5xx, ``ok: false`` errors and slow answers.

Requests are accepted the way ``slack_sdk`` sends them: form-encoded (``blocks`` as a JSON string in a field), JSON
(``Content-Type: application/json``), multipart, and query-string parameters. The bot token is checked from the
``Authorization: Bearer`` header (or a ``token`` field, which Slack also accepts).

Socket Mode: ``apps.connections.open`` (which takes the app-level ``xapp-`` token, and only that) answers with the URL
``socket_mode_url()`` gives; here there is none (``ok: false``), ``tests.bot.support.fake_slack`` adds a Socket Mode
server.

Every state change bumps ``version``; ``wait_for_change`` blocks until it moves (the sandbox page long-polls on it).

Modules: ``fake`` (the class: lifecycle, configuration, faults, inspection, dispatch), ``server`` (HTTP), ``parsing``
(request arguments), ``auth`` (tokens), ``faults``, ``state`` (the workspace), ``limits`` (Slack's size limits),
``records`` (calls, replies, errors), and one module per API family: ``chat``, ``views``, ``directory`` (auth, users,
groups, conversations.open/members), ``history`` (conversations.replies/history).
"""

from bot.sandbox.slack_api.fake import FakeSlack
from bot.sandbox.slack_api.limits import message_limit_error
from bot.sandbox.slack_api.methods import JsonDict, Method
from bot.sandbox.slack_api.parsing import parse_request_args
from bot.sandbox.slack_api.records import RESPONSE_URL_METHOD, Call, Reply, SlackError, ts_key

__all__ = [
    "RESPONSE_URL_METHOD",
    "Call",
    "FakeSlack",
    "JsonDict",
    "Method",
    "Reply",
    "SlackError",
    "message_limit_error",
    "parse_request_args",
    "ts_key",
]
