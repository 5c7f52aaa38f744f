"""Approval requests asked through the HTTP API (or the MCP server, a client of it): what is asked, what is kept.

A request made through the API is a session of its own, ``api:<request id>``, whose one round holds one
approval, published exactly like an agent's round: the same message, policy, escalation, expiry, quorum
and audit. The request id is random, or derived from the client and its idempotency key, so a retried
request names the same session and never creates a second message.
"""

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr
from pydantic_core import PydanticCustomError

from bot.domain.patterns import VISIBLE_NAME_PATTERN, published, whole_match
from bot.domain.policy_rules import ToolName
from bot.domain.slack_ids import ChannelId, MessageTs, UserId

API_SESSION_PREFIX: Final = "api:"
REQUEST_ID_PATTERN: Final = "^[0-9a-f]{24}$"
_REQUEST_ID: Final = re.compile(REQUEST_ID_PATTERN)
_CLIENT_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_URL_MAX: Final = 2000
MAX_INPUT_DEPTH: Final = 32
"""Nesting a tool's input may have: deeper is refused (422) rather than stored, shown or serialized half way."""


_PORT: Final = "(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})"
CALLBACK_URL_PATTERN: Final = (
    "^https?://"
    "(?:[-A-Za-z0-9._~%!$&'()*+,;=:]*@)?"  # user info
    "[A-Za-z0-9_](?:[-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?"  # labels of 1 to 63 characters (no empty one, which
    "(?:[.][A-Za-z0-9_](?:[-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?)*[.]?"  # the HTTP client cannot encode)
    f"(?::{_PORT})?"
    "(?:[/?#][!-~]*)?$"  # path, query, fragment: printable ASCII
)
"""An http(s) URL in printable ASCII with a host name (the client percent-encodes the rest): the worker's HTTP
client refuses a URL with a control, a space or a non-ASCII path, and a callback it refuses would be retried
until given up, so such a URL is refused when asked."""
_callback_url = whole_match(
    CALLBACK_URL_PATTERN,
    code="callback_url",
    message="{value} is not an http(s) URL with a host name, in printable ASCII",
)


_visible_name = whole_match(
    VISIBLE_NAME_PATTERN,
    code="name",
    message="{value} is not a valid tool name (visible characters only: no whitespace, control or invisible "
    "characters)",
)


def _unicode(value: str) -> str:
    # JSON may escape a lone surrogate ("\\ud800"); no UTF-8 text holds one, so nothing could store or answer it.
    try:
        value.encode()
    except UnicodeEncodeError:
        raise PydanticCustomError("unicode", "holds a lone surrogate (\\ud800 to \\udfff): not Unicode text") from None
    return value


def _bounded_depth(value: dict[str, Any]) -> dict[str, Any]:
    frontier: list[tuple[Any, int]] = [(value, 1)]
    while frontier:
        node, depth = frontier.pop()
        if depth > MAX_INPUT_DEPTH:
            raise PydanticCustomError("input_depth", "nested deeper than {limit} levels", {"limit": MAX_INPUT_DEPTH})
        if isinstance(node, str):
            _unicode(node)
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        if isinstance(node, dict):
            frontier.extend((key, depth) for key in node)
        frontier.extend((child, depth + 1) for child in children)
    return value


def client_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name an API client, or ``None``."""
    if _CLIENT_NAME.match(name):
        return None
    return f"{name[:80]!r} is not a valid client name (1 to 63 letters, digits, '-', '_' or '.', starting with one)"


AskedTool = Annotated[
    ToolName,
    Field(min_length=1, max_length=200),
    AfterValidator(_visible_name),
    published(VISIBLE_NAME_PATTERN),
    AfterValidator(_unicode),
]
"""A tool's name as a client asks about it: visible characters only, at most 200."""
ToolInput = Annotated[
    dict[str, Any], AfterValidator(_bounded_depth), Field(json_schema_extra={"x-max-depth": MAX_INPUT_DEPTH})
]
"""A tool's arguments: a JSON object of Unicode text, nested at most ``MAX_INPUT_DEPTH`` levels."""
UnicodeText = Annotated[StrictStr, AfterValidator(_unicode)]
"""Text with no lone surrogate (JSON can escape one; no UTF-8 text holds it)."""
CallbackUrl = Annotated[
    StrictStr, Field(max_length=_URL_MAX), AfterValidator(_callback_url), published(CALLBACK_URL_PATTERN)
]


class ApprovalAsk(BaseModel):
    """The body of ``POST /v1/approvals``: one tool call that needs a person's sign-off."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    tool: AskedTool
    """The tool the agent wants to run (policy rules match it): visible characters only."""
    input: ToolInput = Field(default_factory=dict)
    """Its arguments: a JSON object nested at most 32 levels (``x-max-depth``; the object itself is the first),
    of Unicode text (no lone surrogate escape such as ``\\ud800``)."""
    reason: Annotated[StrictStr, AfterValidator(_unicode)] | None = Field(default=None, max_length=4000)
    """Why the agent wants to run it, shown with the request."""
    requester: UserId | None = None
    """The Slack user the agent acts for (judged for self-approval), if any."""
    channel: ChannelId | None = None
    """Where to post the request; without it, the channel the policy rule matching the tool routes to."""
    thread_ts: MessageTs | None = None
    """A thread of that channel to post it in."""
    idempotency_key: Annotated[StrictStr, AfterValidator(_unicode)] | None = Field(
        default=None, min_length=1, max_length=255
    )
    """The same key (per API key) never creates a second request; a retry gets the first one."""
    callback_url: CallbackUrl | None = None
    """Receives the decision (POST, JSON), signed with the client's callback secret."""

    def fingerprint(self) -> str:
        """What the request asks, as a digest: a retry with the same idempotency key must ask the same."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


@dataclass(frozen=True)
class ChannelRouting:
    """For which tools a request that names no channel still has one (the policy's ``channel:``).

    Attributes:
        by_default: Whether a tool no rule lists is routed.
        exceptions: The tools rules list that are routed when ``by_default`` is false, or not routed when it is
            true (in the policy file's order).
    """

    by_default: bool
    exceptions: tuple[str, ...]

    def routes(self, tool: str) -> bool:
        """Whether a request for ``tool`` may leave out ``channel``."""
        return self.by_default != (tool in self.exceptions)


class ApiRequestRecord(BaseModel):
    """A request made through the API, as kept with its session.

    Attributes:
        request_id: Its id in the API's paths (the session is ``api:<request_id>``).
        client: The name of the API key that asked (audited, shown on the message).
        ask: What it asked.
        team_id: The workspace it was posted in.
        channel_id: Where it was posted (the ask's channel, or the policy's route).
        created_at: When it was asked.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    request_id: str
    client: str
    ask: ApprovalAsk
    team_id: str
    channel_id: str
    created_at: datetime

    @property
    def session_id(self) -> str:
        """The session holding its approval round."""
        return session_id_of(self.request_id)


def request_id_for(client: str, idempotency_key: str | None) -> str:
    """A fresh random id, or, with an idempotency key, the one id that client and key always name."""
    if idempotency_key is None:
        return secrets.token_hex(12)
    return hashlib.sha256(f"{client}\n{idempotency_key}".encode()).hexdigest()[:24]


def is_request_id(value: str) -> bool:
    """Whether ``value`` has the form of a request id (anything else is not found, without a lookup)."""
    return _REQUEST_ID.fullmatch(value) is not None


def session_id_of(request_id: str) -> str:
    """The session of a request made through the API."""
    return f"{API_SESSION_PREFIX}{request_id}"


def is_api_session(session_id: str) -> bool:
    """Whether the session was opened by the API (no agent behind it: its decision goes back to the client)."""
    return session_id.startswith(API_SESSION_PREFIX)
