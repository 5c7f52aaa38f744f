"""Approval requests asked through the HTTP API (or the MCP server, a client of it): what is asked, what is kept.

A request made through the API is a session of its own, ``api:<request id>``, whose one round holds one
approval, published exactly like an agent's round: the same message, policy, escalation, expiry, quorum
and audit. The request id is random, or derived from the client and its idempotency key, so a retried
request names the same session and never creates a second message.
"""

import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from bot.domain.edit_form import MAX_FIELDS
from bot.domain.patterns import NON_BLANK_PATTERN, VISIBLE_NAME_PATTERN, published, somewhere, whole_match
from bot.domain.policy.policy_rules import ToolName
from bot.domain.question_kinds import MAX_DESCRIPTION, MAX_LABEL, MAX_OPTIONS
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


# A body's fields run in the reverse order of its bases (pydantic collects them from ``object`` down): each ask
# names a private base with what it asks before ``AskEnvelope``, so what is asked comes first in the OpenAPI
# document and in docs/http-api.md, then the envelope's fields, then the body's own (``respond``).


class AskEnvelope(BaseModel):
    """What every request made through the API carries besides what it asks: who for, where, its key, its callback."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    requester: UserId | None = None
    """The Slack user the agent acts for, if any: an approval judges them for self-approval; a question is theirs to
    answer, unless the matching rule names its deciders."""
    channel: ChannelId | None = None
    """Where to post the request; without it, the channel the policy rule matching the tool (a question: its
    ``name``) routes to."""
    thread_ts: MessageTs | None = None
    """A thread of that channel to post it in."""
    idempotency_key: Annotated[StrictStr, AfterValidator(_unicode)] | None = Field(
        default=None, min_length=1, max_length=255
    )
    """The same key (per API key) never creates a second request; a retry gets the first one."""
    callback_url: CallbackUrl | None = None
    """Receives the outcome, the decision or the answer (POST, JSON), signed with the client's callback secret."""

    def fingerprint(self) -> str:
        """What the request asks, as a digest: a retry with the same idempotency key must ask the same.

        Objects' keys are sorted: a client's JSON library picks their order, and a retry serialized anew is no other
        request.
        """
        asked = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(asked.encode()).hexdigest()


class _ToolCall(BaseModel):
    """What an approval asks about (``ApprovalAsk``'s first fields)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    tool: AskedTool
    """The tool the agent wants to run (policy rules match it): visible characters only."""
    input: ToolInput = Field(default_factory=dict)
    """Its arguments: a JSON object nested at most 32 levels (``x-max-depth``; the object itself is the first),
    of Unicode text (no lone surrogate escape such as ``\\ud800``)."""
    reason: Annotated[StrictStr, AfterValidator(_unicode)] | None = Field(default=None, max_length=4000)
    """Why the agent wants to run it, shown with the request."""


class ApprovalAsk(AskEnvelope, _ToolCall):
    """The body of ``POST /v1/approvals``: one tool call that needs a person's sign-off."""

    respond: StrictBool = False
    """Whether a person may also answer in words instead of approving or denying (LangChain's ``respond``): the
    message offers "Answer instead", and the words end the request with status ``answered`` and the text in
    ``answer`` (the tool does not run; its result is the person's words)."""


QUESTION_TEXT_MAX: Final = 4000
DEFAULT_QUESTION_NAME: Final = "question"
"""The interrupt name of a question asked through the API that names none (rules match it: ``interrupts``)."""
_non_blank = somewhere(NON_BLANK_PATTERN, code="blank", message="must hold a visible character")
NonBlank = Annotated[StrictStr, AfterValidator(_unicode), AfterValidator(_non_blank), published(NON_BLANK_PATTERN)]
"""Text with something besides whitespace and control characters in it."""


class OptionAsk(BaseModel):
    """One option a question offers: what the person picks and what the client receives (``label``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    label: NonBlank = Field(max_length=MAX_LABEL)
    """The answer, as shown and as received (distinct among the options; at most 75 characters, also once its hidden
    characters are spelled out as shown: Slack's limit)."""
    description: NonBlank | None = Field(default=None, max_length=MAX_DESCRIPTION)
    """Shown beside the label (at most 75 characters)."""


def _label_as_option(value: Any) -> Any:
    return {"label": value} if isinstance(value, str) else value


_OPTION_SCHEMA: Final = {
    "anyOf": [
        {"type": "string", "minLength": 1, "maxLength": MAX_LABEL, "pattern": NON_BLANK_PATTERN},
        OptionAsk.model_json_schema(),
    ]
}
OptionGiven = Annotated[OptionAsk, BeforeValidator(_label_as_option), WithJsonSchema(_OPTION_SCHEMA)]
"""An option as a client gives it: its label alone, or ``{"label", "description"}``."""


class _Question(BaseModel):
    """What a question asks (``QuestionAsk``'s first fields)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    question: NonBlank = Field(max_length=QUESTION_TEXT_MAX)
    """The question, shown as written (escaped; hidden characters made visible): not blank."""
    options: tuple[OptionGiven, ...] | None = Field(default=None, min_length=1, max_length=MAX_OPTIONS)
    """1 to 100 answers to choose from: each a label (at most 75 characters, also as shown: a hidden character counts
    as its spelling, ``⟨U+200B⟩``) or ``{"label", "description"}``; labels distinct (a 422 names the second of two
    alike). Without them (and without ``schema``) the answer is words."""
    multiple: StrictBool = False
    """With ``options``: several may be chosen (the answer is then the list of labels, in the options' order)."""
    other: StrictBool = False
    """With ``options``: the person may answer in their own words instead ("Other…"); the answer is then the words,
    a string that may be none of the labels (as Claude Code's ``AskUserQuestion`` lets a person type one)."""
    form_schema: dict[str, Any] | None = Field(
        default=None,
        alias="schema",
        json_schema_extra={
            "required": ["properties"],
            "properties": {
                "type": {"const": "object"},
                "properties": {"type": "object", "minProperties": 1, "maxProperties": MAX_FIELDS},
            },
        },
    )
    """A JSON Schema of ``"type": "object"`` with 1 to 40 ``properties``, at most 8,000 characters as JSON: the
    answer is the object its form is filled in with. It is checked as a JSON Schema (against its metaschema) and each
    property must make a form field (a 422 names where it fails: ``schema.properties.replicas.minimum``). Not with
    ``options``."""
    name: AskedTool = DEFAULT_QUESTION_NAME
    """The interrupt name policy rules match (``match: {interrupts: [...]}``): visible characters only."""


class QuestionAsk(AskEnvelope, _Question):
    """The body of ``POST /v1/questions``: a question for a person, answered in words, with options, or a form."""

    model_config = ConfigDict(
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        json_schema_extra={
            "allOf": [
                {
                    "description": "options or a form, not both",
                    "not": {
                        "required": ["options", "schema"],
                        "properties": {"options": {"type": "array"}, "schema": {"type": "object"}},
                    },
                },
                {
                    "description": "`multiple: true` only with options",
                    "anyOf": [
                        {"not": {"required": ["multiple"], "properties": {"multiple": {"const": True}}}},
                        {"required": ["options"], "properties": {"options": {"type": "array"}}},
                    ],
                },
                {
                    "description": "`other: true` only with options",
                    "anyOf": [
                        {"not": {"required": ["other"], "properties": {"other": {"const": True}}}},
                        {"required": ["options"], "properties": {"options": {"type": "array"}}},
                    ],
                },
            ]
        },
    )

    def reason(self) -> dict[str, Any]:
        """The interrupt reason that asks this question (``agent.vended.question_of`` reads it)."""
        reason: dict[str, Any] = {"question": self.question}
        if self.options is not None:
            reason["options"] = [option.model_dump(exclude_none=True) for option in self.options]
            reason["multiple"] = self.multiple
            reason["other"] = self.other
        else:
            for name in ("multiple", "other"):  # judged, and refused, as an agent's would be
                if name in self.model_fields_set:
                    reason[name] = getattr(self, name)
        if self.form_schema is not None:
            reason["schema"] = self.form_schema
        return reason


RequestKind = Literal["approval", "question"]
"""What a request made through the API asks: a decision on a tool call, or a person's answer."""


@dataclass(frozen=True)
class ChannelRouting:
    """For which tools a request that names no channel still has one (the policy's ``channel:``).

    Attributes:
        by_default: Whether a tool no rule lists is routed.
        exceptions: The tools rules list that are routed when ``by_default`` is false, or not routed when it is
            true (in the policy file's order).
        questions: The same for questions, by their ``name`` (``None``: no question is routed).
    """

    by_default: bool
    exceptions: tuple[str, ...]
    questions: "ChannelRouting | None" = None

    def routes(self, tool: str) -> bool:
        """Whether a request for ``tool`` may leave out ``channel``."""
        return self.by_default != (tool in self.exceptions)


class ApiRequestRecord(BaseModel):
    """A request made through the API, as kept with its session.

    Attributes:
        request_id: Its id in the API's paths (the session is ``api:<request_id>``).
        client: The name of the API key that asked (audited, shown on the message).
        ask: What it asked: an approval, or a question.
        team_id: The workspace it was posted in.
        channel_id: Where it was posted (the ask's channel, or the policy's route).
        created_at: When it was asked.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    request_id: str
    client: str
    ask: ApprovalAsk | QuestionAsk
    team_id: str
    channel_id: str
    created_at: datetime

    @property
    def session_id(self) -> str:
        """The session holding its approval round."""
        return session_id_of(self.request_id)

    @property
    def kind(self) -> RequestKind:
        """Whether it asks for a decision or for an answer."""
        return "question" if isinstance(self.ask, QuestionAsk) else "approval"


def request_id_for(client: str, idempotency_key: str | None, kind: RequestKind = "approval") -> str:
    """A fresh random id, or, with an idempotency key, the one id that client, key and kind always name.

    A question's key names another id than the same key of an approval: the two never meet.
    """
    if idempotency_key is None:
        return secrets.token_hex(12)
    scope = "" if kind == "approval" else f"{kind}\n"
    return hashlib.sha256(f"{scope}{client}\n{idempotency_key}".encode()).hexdigest()[:24]


def is_request_id(value: str) -> bool:
    """Whether ``value`` has the form of a request id (anything else is not found, without a lookup)."""
    return _REQUEST_ID.fullmatch(value) is not None


def session_id_of(request_id: str) -> str:
    """The session of a request made through the API."""
    return f"{API_SESSION_PREFIX}{request_id}"


def is_api_session(session_id: str) -> bool:
    """Whether the session was opened by the API (no agent behind it: its decision goes back to the client)."""
    return session_id.startswith(API_SESSION_PREFIX)
