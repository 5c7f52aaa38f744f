"""The loopback Slack: an in-memory Slack Web API on a loopback port, and the requests Slack sends to an app.

The sandbox's Slack stand-in is this package, and so are the Slack the tests and the benches run the bot against: all
use it through what it exports here and from ``loopback_slack.slack_requests`` (the requests Slack sends an app,
and a poster that signs and sends them); its other modules are its own.

``LoopbackSlack`` is a context manager; ``slack.url`` (``http://127.0.0.1:<port>/api/``) is what
``slack_sdk.WebClient`` takes as ``base_url``. It answers the methods the bot uses with the shapes ``slack_sdk``
expects, keeps the resulting workspace state (messages with updates applied, ephemerals, views) and records every
call.

Requests are accepted the way ``slack_sdk`` sends them: form-encoded (``blocks`` as a JSON string in a field), JSON
(``Content-Type: application/json``), multipart, and query-string parameters. The bot token is checked from the
``Authorization: Bearer`` header (or a ``token`` field, which Slack also accepts).

Socket Mode: ``apps.connections.open`` (which takes the app-level ``xapp-`` token, and only that) answers with the URL
``socket_mode_url()`` gives; here there is none (``ok: false``): a subclass that serves Socket Mode overrides it.

Every state change bumps ``version``; ``wait_for_change`` blocks until it moves (the sandbox page long-polls on it).

Extending it: wrap or add Web API methods in ``methods`` (a ``Method`` takes the ``WorkspaceState`` and the call's
arguments and returns the answer's fields, or raises ``SlackError``), answer any method otherwise or later by
overriding ``around_method`` (it returns an ``Answer``: an HTTP 429 or 5xx, an ``ok: false``, a delay), serve more
paths with ``add_route`` (a ``Respond`` answers with a ``Reply``), read or change ``workspace`` under ``lock`` and
call ``changed()``; see ``LoopbackSlack``.

Modules: ``loopback`` (the class: lifecycle, configuration, inspection), ``dispatch`` (answering a request),
``transport`` (HTTP), ``parsing`` (request arguments), ``auth`` (tokens), ``state`` (the workspace), ``limits``
(Slack's size limits), ``calls`` (a call, its answer, a Slack error), ``methods`` (their shapes), ``orgs`` (Enterprise
Grid orgs installed org-wide), and one module per API family: ``chat``, ``views``, ``users`` (auth, users, groups,
conversations.open/members), ``history`` (conversations.replies/history); ``slack_requests`` (what Slack sends the
app).
"""

from loopback_slack.calls import Answer, Call, Reply, SlackError
from loopback_slack.limits import message_limit_error
from loopback_slack.loopback import LoopbackSlack
from loopback_slack.methods import JsonDict, Method
from loopback_slack.state import WorkspaceState, ts_key
from loopback_slack.transport import Respond
from loopback_slack.views import submitted_state

__all__ = [
    "Answer",
    "Call",
    "JsonDict",
    "LoopbackSlack",
    "Method",
    "Reply",
    "Respond",
    "SlackError",
    "WorkspaceState",
    "message_limit_error",
    "submitted_state",
    "ts_key",
]
