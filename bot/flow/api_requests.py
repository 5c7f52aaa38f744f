"""Approvals and questions asked through the HTTP API: ask, read, wait for, withdraw; and tell the client the outcome.

Asking publishes a round of one approval (``bot.flow.publish``), exactly as an agent stopped before
the same tool call would: the same message, policy, schedule (reminders, escalation, expiry),
quorum and audit. A question is a round of one interrupt of its ``name`` whose reason asks it, as an
agent's question (``agent.vended.question_of``): no call waits on it, and the answer is its decision.
People decide it in Slack as any other request. The decision script then
queues the round's resume job; for an API session the worker does not resume an agent but
finishes the request (``ApiOutcomes``): it posts the decision to the client's callback URL,
signed with the client's secret, and lets the records expire after the retention period.
Clients that wait instead read the approval itself (``wait``), so a web process that dies
while a client waits loses nothing: the client asks again and reads the same record.
"""

import json
import logging
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final
from uuid import NAMESPACE_OID, uuid5

from redis import Redis
from slack_sdk.signature import SignatureVerifier

from agent.approval import APPROVAL_INTERRUPT
from agent.vended import AskedQuestion
from bot.domain.api_requests import (
    ApiRequestRecord,
    ApprovalAsk,
    ChannelRouting,
    QuestionAsk,
    RequestKind,
    is_api_session,
    is_request_id,
    request_id_for,
    session_id_of,
)
from bot.domain.errors import RefusedRequest
from bot.domain.policy.policy import PolicyBook
from bot.domain.question_kinds import QuestionError, asked_question
from bot.flow.api_views import ApiRequestView
from bot.flow.base import Flow
from bot.flow.publish import RoundPublisher
from bot.render.texts import decision_reasons
from bot.store.access.api_keys import ApiClient, ApiKeys
from bot.store.approvals.api_requests import ApiRequestStore, StoredApiRequest
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.threads import ThreadInfo, Threads
from bot.store.audit import Audit
from state.interrupt import Interrupt
from state.shapes import ToolUse

logger = logging.getLogger(__name__)

MAX_WAIT_S: Final = 60
_POLL_S: Final = 0.1
_CALLBACK_TIMEOUT_S: Final = 10
_PUBLISH_GRACE: Final = timedelta(seconds=30)
"""How long a retry leaves an unpublished request to the ask that created it, before publishing it itself."""
SIGNATURE_HEADER: Final = "X-Signoff-Signature"
TIMESTAMP_HEADER: Final = "X-Signoff-Request-Timestamp"


class AskProblem(RefusedRequest):
    """A request the API refuses, naming the field at fault.

    Attributes:
        field: The field of the request body at fault.
        status: The HTTP status to answer with (422, or 409 for a conflict with an earlier request).
    """

    def __init__(self, field: str, message: str, *, status: int = 422) -> None:
        """Keep the field at fault, the message and the status."""
        super().__init__(message, status=status)
        self.field = field


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiRequests(Flow):
    """What the HTTP API (and so the MCP server) can do with approvals."""

    api_requests: ApiRequestStore
    approvals: ApprovalStore
    audit: Audit
    publisher: RoundPublisher
    policies: PolicyBook
    team_id: Callable[[], str]
    """Names the bot's workspace (asked once, when first needed) for a client whose key names none (it raises
    ``AskProblem`` when the bot serves several)."""

    def ask(self, client: ApiClient, ask: ApprovalAsk) -> tuple[ApiRequestView, bool]:
        """Open the request (or find the one its idempotency key opened); return it and whether it is new.

        Raises:
            AskProblem: No channel is named or routed, or the idempotency key was used for another request.
        """
        channel = ask.channel or self._routed_channel(ask.tool)
        if channel is None:
            raise AskProblem("channel", f"required: no policy rule routes the tool {ask.tool!r} to a channel")
        return self._open(client, ask, channel)

    def ask_question(self, client: ApiClient, ask: QuestionAsk) -> tuple[ApiRequestView, bool]:
        """Open the question (or find the one its idempotency key opened); return it and whether it is new.

        Its options or form are checked as an agent's are (``bot.domain.question_kinds``), before anything is kept.

        Raises:
            AskProblem: Options or a form that cannot be offered, no channel named or routed, or the idempotency key
                was used for another request.
        """
        if ask.options is not None and ask.form_schema is not None:
            raise AskProblem("schema", "not with options: a question offers options or a form, not both")
        try:
            asked_question(AskedQuestion(ask.question, **_offered(ask)))
        except QuestionError as problem:
            field, _, message = str(problem).partition(": ")
            raise AskProblem(field, message) from None
        channel = ask.channel or self.policies.channel_for(None, ask.name)
        if channel is None:
            raise AskProblem("channel", f"required: no policy rule routes the question {ask.name!r} to a channel")
        return self._open(client, ask, channel)

    def _open(self, client: ApiClient, ask: ApprovalAsk | QuestionAsk, channel: str) -> tuple[ApiRequestView, bool]:
        kind: RequestKind = "question" if isinstance(ask, QuestionAsk) else "approval"
        record = ApiRequestRecord(
            request_id=request_id_for(client.name, ask.idempotency_key, kind),
            client=client.name,
            ask=ask,
            team_id=client.team_id or self.team_id(),
            channel_id=channel,
            created_at=self.clock(),
        )
        existing = self.api_requests.create(record)
        if existing is not None:
            if existing.record.ask.fingerprint() != ask.fingerprint():
                raise AskProblem(
                    "idempotency_key", "already used for a different request (same key, other fields)", status=409
                )
            record = existing.record
        view = self._view(existing or StoredApiRequest(record))
        if view.approval is None and (existing is None or self.clock() - record.created_at > _PUBLISH_GRACE):
            # New, or asked again after a process died between keeping the record and publishing it. A retry
            # racing the first ask leaves publishing to it: two publishers would both open and audit the round.
            self._publish(record)
            view = self._view(view.stored)
        if existing is None:
            asked = {"tool": ask.tool} if isinstance(ask, ApprovalAsk) else {"question": ask.name}
            self.audit.record(
                "api_request",
                session_id=record.session_id,
                actor=f"api:{client.name}",
                request_id=record.request_id,
                channel=record.channel_id,
                **asked,
            )
        return view, existing is None

    def channel_routing(self) -> ChannelRouting:
        """For which tools the policy names a channel, so that a request may leave it out (the API's document)."""
        by_default = self._routed_channel(None) is not None
        listed = dict.fromkeys(tool for rule in self.policies.rules for tool in rule.match.tools)
        exceptions = tuple(tool for tool in listed if (self._routed_channel(tool) is not None) != by_default)
        return ChannelRouting(by_default=by_default, exceptions=exceptions, questions=self._question_routing())

    def _question_routing(self) -> ChannelRouting:
        """For which question names the policy names a channel (``channel_for`` with no tool)."""
        by_default = self.policies.channel_for(None, "") is not None  # a name no rule lists
        named = dict.fromkeys(name for rule in self.policies.rules for name in rule.match.interrupts)
        exceptions = tuple(name for name in named if (self.policies.channel_for(None, name) is not None) != by_default)
        return ChannelRouting(by_default=by_default, exceptions=exceptions)

    def _routed_channel(self, tool: str | None) -> str | None:
        """Where the policy posts a request for ``tool`` that names no channel (``None``: a tool no rule lists)."""
        return self.policies.channel_for(tool, APPROVAL_INTERRUPT)

    def find(self, client: ApiClient, request_id: str, *, kind: RequestKind = "approval") -> ApiRequestView | None:
        """The client's request ``request_id`` of that kind, or ``None`` (unknown, another client's or kind)."""
        if not is_request_id(request_id):
            return None
        stored = self.api_requests.get(session_id_of(request_id))
        if stored is None or stored.record.client != client.name or stored.record.kind != kind:
            return None
        return self._view(stored)

    def wait(
        self, client: ApiClient, request_id: str, *, timeout_s: float, kind: RequestKind = "approval"
    ) -> ApiRequestView | None:
        """``find``, once the request is decided or ``timeout_s`` passed (at most ``MAX_WAIT_S``)."""
        deadline = time.monotonic() + min(timeout_s, MAX_WAIT_S)
        view = self.find(client, request_id, kind=kind)
        while view is not None and view.status == "pending" and time.monotonic() < deadline:
            time.sleep(_POLL_S)
            view = self.find(client, request_id, kind=kind)
        return view

    def cancel(
        self, client: ApiClient, request_id: str, *, reason: str | None = None, kind: RequestKind = "approval"
    ) -> ApiRequestView | None:
        """Withdraw a pending request (a decision that stands is kept); ``None`` if there is no such request.

        ``reason`` is shown on its message (default: withdrawn through the API by the client).
        """
        view = self.find(client, request_id, kind=kind)
        if view is None or view.approval is None or view.approval.decision is not None:
            return view
        # Marked first: a withdrawal that lands is never reported as a denial, even to a reader in between.
        self.api_requests.mark_cancelled(view.stored.record.session_id)
        reason = reason or decision_reasons.withdrawn_through_api(client.name)
        self.decisions.withdraw(view.approval, actor=f"api:{client.name}", reason=reason)
        return self.find(client, request_id, kind=kind)

    def _publish(self, record: ApiRequestRecord) -> None:
        ask = record.ask
        info = ThreadInfo(
            team_id=record.team_id,
            channel_id=record.channel_id,
            thread_ts=ask.thread_ts or "",
            requested_by=ask.requester or "",
        )
        if isinstance(ask, QuestionAsk):
            # No call waits on a question: its interrupt's id names none, so only the rules of its name apply.
            interrupt = Interrupt(
                id=f"v1:api-question:{record.request_id}:{uuid5(NAMESPACE_OID, ask.name)}",
                name=ask.name,
                reason=ask.reason(),
            )
            self.publisher.publish_question(record.session_id, info, interrupt, client=record.client)
            return
        tool_use_id = f"api-{record.request_id}"
        call: ToolUse = {"toolUseId": tool_use_id, "name": ask.tool, "input": ask.input}
        # The reason is the requester's words alone: the message names the tool and the client itself.
        interrupt = Interrupt(
            id=f"v1:api:{tool_use_id}:{uuid5(NAMESPACE_OID, APPROVAL_INTERRUPT)}",
            name=APPROVAL_INTERRUPT,
            reason=ask.reason,
        )
        self.publisher.publish_request(
            record.session_id, info, interrupt, call, client=record.client, answer_offered=ask.respond
        )

    def _view(self, stored: StoredApiRequest) -> ApiRequestView:
        _version, approvals = self.approvals.round_approvals(stored.record.session_id, readable_only=True)
        return ApiRequestView(stored, approvals[0] if approvals else None)


def _offered(ask: QuestionAsk) -> dict[str, Any]:
    """What the question offers, as an agent's reason gives it (``AskedQuestion``'s fields but its text)."""
    reason = ask.reason()
    return {name: reason[name] for name in ("options", "multiple", "schema", "other") if name in reason}


def post_json(url: str, body: bytes, headers: dict[str, str]) -> None:
    """POST a callback; any answer but 2xx raises (the worker retries the job).

    Raises:
        OSError: Not delivered (refused, timed out, or answered with an error status).
    """
    request = urllib.request.Request(
        url, data=body, method="POST", headers={**headers, "Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=_CALLBACK_TIMEOUT_S) as response:
        if not 200 <= response.status < 300:
            raise OSError(f"callback answered {response.status}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiOutcomes:
    """Finishes a decided API request in the worker (the ``resume`` of its round): callback, then retention."""

    redis: Redis
    """The client the round's retention is written on, in one transaction."""
    api_requests: ApiRequestStore
    api_keys: ApiKeys
    approvals: ApprovalStore
    audit: Audit
    retention_s: int
    send: Callable[[str, bytes, dict[str, str]], None] = post_json
    """``send(url, body, headers)`` posts a callback (raising on failure)."""

    def owns(self, session_id: str) -> bool:
        """Whether the HTTP API opened the session."""
        return is_api_session(session_id)

    def finish(self, session_id: str, version: int) -> None:
        """Send the decision to the callback URL, if any and not sent yet; then let the records expire.

        Raises:
            OSError: The callback could not be delivered (the job is retried).
        """
        stored = self.api_requests.get(session_id)
        _round_version, approvals = self.approvals.round_approvals(session_id, readable_only=True)
        if stored is None or not approvals or approvals[0].decision is None:
            logger.warning("session_id=<%s>, version=<%d> | nothing decided to finish", session_id, version)
            return
        view = ApiRequestView(stored, approvals[0])
        url = stored.record.ask.callback_url
        if url is not None and not stored.notified:
            client = self.api_keys.get(stored.record.client)
            if client is None:
                logger.warning("session_id=<%s> | client %s revoked: no callback", session_id, stored.record.client)
            else:
                body = json.dumps(view.to_json(), ensure_ascii=False).encode()
                self.send(url, body, signed_headers(client.callback_secret, body))
                self.api_requests.mark_notified(session_id)
                self.audit.record(
                    "api_callback", session_id=session_id, actor=f"api:{client.name}", status=view.status, url=url
                )
        # Decided: the records stay readable (late readers, App Home) for the retention period, then go.
        transaction = self.redis.pipeline(transaction=True)
        self.approvals.expire_round(transaction, session_id, after_s=self.retention_s, round_record=True)
        Threads.keep(transaction, session_id, expire_after_s=self.retention_s)
        transaction.execute()
        self.api_requests.expire(session_id, after_s=self.retention_s)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``v0=<hex>``: HMAC-SHA256 of ``v0:<timestamp>:<body>`` with the client's secret (as Slack signs its own)."""
    signed = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    assert signed is not None  # None only without a timestamp
    return signed


def signed_headers(secret: str, body: bytes, *, now: float | None = None) -> dict[str, str]:
    """The headers of a callback: its timestamp and signature."""
    timestamp = str(int(time.time() if now is None else now))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secret, timestamp, body)}
