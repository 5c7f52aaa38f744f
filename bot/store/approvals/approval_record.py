"""An approval as read back: its request and everything that happened to it since (``Approval``).

``bot.store.approvals.approvals`` writes an approval's records; ``queue_reads`` queues the reads one approval is made
of (its hash, discussion, votes and edit), and ``approval_from`` builds it from their replies, refusing what it cannot
read (``ApprovalDataError``).
"""

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import pydantic_core
import redis
from pydantic import ValidationError

from bot.domain.edits import CallEdit
from bot.domain.errors import SignoffError
from bot.domain.progress import Progress
from bot.domain.records import ApprovalRequest, Decision, DiscussionEntry, GuardedCall
from bot.observe.tracing import TRACE_FIELD, valid_traceparent
from bot.store import keys
from bot.store.approvals.edits import read_edit
from state.text import as_text


class ApprovalDataError(SignoffError, RuntimeError):
    """An approval stored in Redis cannot be read back (corrupted or foreign data)."""


@dataclass(frozen=True)
class Approval:
    """An approval request and everything that happened to it so far."""

    request: ApprovalRequest
    decision: Decision | None
    discussion: tuple[DiscussionEntry, ...] = ()
    votes: frozenset[str] = frozenset()
    claimed_by: str | None = None
    claimed_until_ms: int | None = None
    level: int = 0
    copies: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Direct-message copies of the approval message: user -> (channel, ts)."""
    version: int = 0
    """Bumped with every queued message update: the state its messages should show."""
    post_entry: str | None = None
    """The outbox entry that posted the message (its marker stays on the message)."""
    edit: CallEdit | None = None
    """The input an approver edited the call to, while it waits (and once decided: what was approved)."""
    traceparent: str = ""
    """The trace of the run that raised it (``bot.observe.tracing``), "" when none was recorded."""

    @property
    def shown_input(self) -> Any:
        """The input the approval is for now: the edited one, if edited."""
        return self.edit.input if self.edit is not None else self.request.tool_input

    @property
    def shown_digest(self) -> str | None:
        """The digest an Approve of this approval names (``None``: it names none, e.g. a batch)."""
        return self.edit.digest if self.edit is not None else self.request.input_digest

    @property
    def progress(self) -> Progress:
        """What its message shows besides the request while it waits: votes, a claim, the ladder's level, an edit."""
        until = (
            datetime.fromtimestamp(self.claimed_until_ms / 1000, self.request.created_at.tzinfo)
            if self.claimed_until_ms is not None
            else None
        )
        return Progress(
            votes=tuple(sorted(self.votes)),
            claimed_by=self.claimed_by,
            claimed_until=until,
            level=self.level,
            edit=self.edit,
        )


READS: Final = 4
"""How many replies ``queue_reads`` queues."""


def queue_reads(pipeline: redis.client.Pipeline, session_id: str, approval_id: str) -> None:
    """Queue the reads one approval is made of (its hash, discussion, votes and edit): ``READS`` replies."""
    pipeline.hgetall(keys.approval(session_id, approval_id))
    pipeline.lrange(keys.discussion(session_id, approval_id), 0, -1)
    pipeline.smembers(keys.votes(session_id, approval_id))
    pipeline.hgetall(keys.approval_edit(session_id, approval_id))


def approval_from(
    approval_id: str,
    fields: dict[bytes, bytes],
    replies: list[bytes],
    votes: set[bytes],
    edit_fields: dict[bytes, bytes],
) -> Approval | None:
    """The approval the reads of ``queue_reads`` returned (``None``: there is none).

    Raises:
        ApprovalDataError: The stored data is not a valid approval.
    """
    if not fields:
        return None
    try:
        decoded = {as_text(key): as_text(value) for key, value in fields.items()}
        request = request_from(decoded["request"])
        if "message_ts" in decoded:
            request = request.model_copy(update={"message_ts": decoded["message_ts"]})
        decision = Decision.model_validate_json(decoded["decision"]) if "decision" in decoded else None
        discussion = tuple(DiscussionEntry.model_validate_json(reply) for reply in replies)
        copies = {
            name.removeprefix("copy:"): _channel_and_ts(value)
            for name, value in decoded.items()
            if name.startswith("copy:")
        }
        claimed_until = int(decoded["claimed_until_ms"]) if "claimed_until_ms" in decoded else None
        level = int(decoded.get("level", "0"))
        version = int(decoded.get("version", "0"))
        edit = read_edit(approval_id, edit_fields)
    except (KeyError, ValueError, ValidationError) as error:
        raise ApprovalDataError(f"approval_id=<{approval_id}> | stored approval is unreadable: {error}") from error
    return Approval(
        request,
        decision,
        discussion,
        frozenset(as_text(vote) for vote in votes),
        decoded.get("claimed_by"),
        claimed_until,
        level,
        copies,
        version,
        decoded.get("post_entry"),
        edit,
        valid_traceparent(decoded.get(TRACE_FIELD)),
    )


_SAME: Final = "same"
"""The stored request's list of the copies left out (``stored_request``); never a field of a request."""
_REASON_MIRRORS: Final = {
    "tool": "tool",
    "input": "tool_input",
    "toolUseId": "tool_use_id",
    "inputSchema": "input_schema",
}
"""A tool gate's reason (as the agent gave it) repeats these request fields under its own names."""


def stored_request(request: ApprovalRequest) -> str:
    """The request as its approval stores it (JSON): each copy of the tool's call once, no field at its default.

    A one-call request's ``calls`` and its reason's tool, input and schema repeat the request's own fields: they are
    left out and named in ``same`` (``request_from`` puts them back, exactly). A field at its default is left out
    (read back, it takes its default again). About half of a request's bytes, and of its input's, at no cost.
    """
    stored = request.model_dump(mode="json", exclude_defaults=True)
    same = []
    if len(request.calls) == 1 and request.tool is not None and request.tool_use_id is not None:
        own = GuardedCall(tool=request.tool, input=request.tool_input, tool_use_id=request.tool_use_id)
        if _json(own.model_dump(mode="json")) == _json(request.calls[0].model_dump(mode="json")):
            del stored["calls"]
            same.append("calls")
    reason = stored.get("reason")
    if isinstance(reason, dict):
        for name, field_name in _REASON_MIRRORS.items():
            if name in reason and field_name in stored and _json(reason[name]) == _json(stored[field_name]):
                reason[name] = None  # its place kept: read back, the reason's keys are in the agent's order
                same.append(f"reason.{name}")
    if same:
        stored[_SAME] = same
    return json.dumps(stored, separators=(",", ":"))


def request_from(raw: str) -> ApprovalRequest:
    """The request ``stored_request`` stored (or a request stored whole, as before it).

    Raises:
        ValueError: It is not a request (``pydantic.ValidationError`` is one).
    """
    if f'"{_SAME}"' not in raw:
        return ApprovalRequest.model_validate_json(raw)
    stored = pydantic_core.from_json(raw)  # the parser ``model_validate_json`` uses: nesting bounded the same way
    same = stored.pop(_SAME, []) if isinstance(stored, dict) else None
    if not isinstance(same, list):
        raise ValueError(f"{_SAME}=<{same!r}> | not a list of the copies left out")
    reason = stored.get("reason")
    for name in same:
        if name == "calls":
            stored["calls"] = [
                {
                    "tool": stored.get("tool"),
                    "input": stored.get("tool_input"),
                    "tool_use_id": stored.get("tool_use_id"),
                }
            ]
        elif _left_out_of(reason, name):
            key = str(name).removeprefix("reason.")
            reason[key] = stored.get(_REASON_MIRRORS[key])
        else:
            raise ValueError(f"{_SAME}=<{name!r}> | not a copy a request leaves out")
    return ApprovalRequest.model_validate(stored)


def _left_out_of(reason: Any, name: Any) -> bool:
    """Whether ``name`` (from ``same``) is a key of ``reason`` that ``stored_request`` left out (held ``null``)."""
    key = str(name).removeprefix("reason.")
    if not isinstance(reason, dict) or not str(name).startswith("reason.") or key not in _REASON_MIRRORS:
        return False
    return key in reason and reason[key] is None


def _json(value: Any) -> str:
    """``value`` as JSON, compared exactly (``1`` and ``true``, key order, all tell apart)."""
    return json.dumps(value, separators=(",", ":"))


def copy_value(channel: str, ts: str) -> str:
    """How a direct-message copy is recorded: ``channel|ts``."""
    return f"{channel}|{ts}"


def _channel_and_ts(value: str) -> tuple[str, str]:
    channel, _, ts = value.partition("|")
    return channel, ts
