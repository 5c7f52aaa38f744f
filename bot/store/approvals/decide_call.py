"""The decide script's call: an attempt on an approval (``Attempt``) as the script's keys and arguments, and its answer.

``ApprovalStore.decide`` runs the script (``bot.store.scripts.decide``); this module says what the script is given
(``keys_and_args``), what of a request it judges by (``terms``, stored with the request) and reads what it returns
(``DecideResult``).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Final

from bot.domain.records import ApprovalRequest, Decision
from bot.domain.status import Status
from bot.store import keys, scripts
from bot.store.approvals.approval_record import request_from
from bot.store.queues.jobs import JobQueue
from bot.store.queues.outbox import Outbox
from bot.store.scripts.decide import DECIDE
from state.store import shard_count
from state.text import as_text

RECENT_KEPT: Final = 50
"""How many recent decisions each shard keeps at least (the script trims them in batches, at most twice that)."""


@dataclass(frozen=True)
class Attempt:
    """One attempt to decide an approval, as the decide script judges it (``bot.store.scripts.decide``).

    Attributes:
        session_id: The approval's session (a button carries it: the script's keys follow from it).
        approval_id: The approval.
        kind: ``approve``, ``deny``, ``answer`` or ``expired``; for a check, also ``discuss``.
        user: Who decides (``signoff:expiry`` for the clock).
        team_id: The workspace the caller expects the request in (the script says if it is another).
        channel_id: The channel the caller expects the request in (idem).
        origin: Where the attempt comes from (``surface``, ``team_id``, ``user_team_id``, ``channel_id``, ``ts``,
            ``thread_ts``; ``""`` for none); ``None``: the clock, judged by no person's rights.
        reason_given: Whether a deny carries a reason (a policy may require one).
        written_at: The ts of the typed reply that decides ("" otherwise).
        quorum: Approvals needed (0: the policy's).
        groups: User groups whose cached members the script may read.
        replay: The request's signature, when the attempt is a signed request to refuse if replayed.
        replay_ttl_s: How long the signature is remembered.
        with_request: Whether a recorded decision is answered with its request (any other answer is).
        shown: The digest of the input the person approves as shown to them (a button carries it; ``""``: none, as
            for a typed reply: then an edited call is not approved).
        trust: The approval also trusts the tool for the rest of the session (only where the request offers it).
        answer_kind: For an answer, how the question is answered: ``text``, ``choice`` (``choices``) or ``form``.
        choices: For a ``choice`` answer, the indexes of the options chosen (the script records their labels).
        check: Only judge it (the script writes nothing and answers ``allowed`` where it would go on to record it).
        grant: The standing approval that decides it (``""``: none); refused once a revoke fenced its use.
    """

    session_id: str
    approval_id: str
    kind: str
    user: str
    team_id: str
    channel_id: str
    origin: dict[str, str] | None
    reason_given: bool = False
    written_at: str = ""
    quorum: int = 0
    groups: tuple[str, ...] = ()
    replay: str | None = None
    replay_ttl_s: int = 0
    with_request: bool = False
    shown: str = ""
    trust: bool = False
    answer_kind: str = "text"
    choices: tuple[int, ...] = ()
    check: bool = False
    grant: str = ""


@dataclass(frozen=True)
class DecideResult:
    """What the decide script answered (``bot.store.scripts.decide``); its records are read on demand.

    Attributes:
        status: What happened (``bot.domain.status.Status``).
        session_id: The approval's session.
        approval_id: The approval.
        value: The decision (``already``, ``decided``), the vote count (``vote``) or what is needed (``needs``).
        request_json: The stored request, when there is one (for ``decided``, only if the attempt asked for it).
        message_ts: Where its message was posted, when recorded.
    """

    status: Status
    session_id: str = ""
    approval_id: str = ""
    value: str = ""
    request_json: str = ""
    message_ts: str = ""

    @classmethod
    def from_reply(cls, attempt: Attempt, reply: Sequence[bytes | str]) -> "DecideResult":
        """The script's answer to ``attempt``, from its reply: status, value, request JSON, message ts."""
        status, value, request_json, message_ts = reply
        return cls(
            Status(as_text(status)),
            attempt.session_id,
            attempt.approval_id,
            as_text(value),
            as_text(request_json),
            as_text(message_ts),
        )

    @cached_property
    def request(self) -> ApprovalRequest | None:
        """The stored request (with its message's ts), if any."""
        if not self.request_json:
            return None
        request = request_from(self.request_json)
        return request.model_copy(update={"message_ts": self.message_ts}) if self.message_ts else request

    @cached_property
    def decision(self) -> Decision | None:
        """The decision that stands (``already``, ``decided``)."""
        if self.status in (Status.ALREADY, Status.DECIDED) and self.value:
            return Decision.model_validate_json(self.value)
        return None

    @property
    def votes(self) -> int:
        """Approvals counted so far (``vote``)."""
        return int(self.value) if self.status is Status.VOTE else 0

    @property
    def needs(self) -> dict[str, Any]:
        """What the script needs first (``needs``): ``team_id`` and ``channel_id``, ``members``, ``groups``."""
        needs = json.loads(self.value) if self.status is Status.NEEDS else {}
        return needs if isinstance(needs, dict) else {}


def keys_and_args(
    attempt: Attempt,
    *,
    decision: Decision | None = None,
    update: scripts.ScriptRecord = (),
    audit: tuple[scripts.ScriptRecord, ...] = (),
    answer_by_ms: int = 0,
) -> tuple[list[str], list[str]]:
    """The decide script's keys and arguments for ``attempt`` (``answer_by_ms``: when its caller stops waiting).

    A check (``attempt.check``) takes no records: ``decision`` is ``None``.
    """
    session_id, approval_id = attempt.session_id, attempt.approval_id
    shard = keys.shard_of(session_id)  # every key below shares the session's slot (Redis Cluster)
    decided_ms = int(decision.decided_at.timestamp() * 1000) if decision is not None else 0
    request_keys = DECIDE.key_list(
        *(keys.usergroup(attempt.team_id, group, shard=shard) for group in attempt.groups),
        *([keys.seen_signature(attempt.replay, shard=shard)] if attempt.replay is not None else []),
        *([keys.grant_revoked(session_id, approval_id, attempt.grant)] if attempt.grant else []),
        approval_key=keys.approval(session_id, approval_id),
        open_set_key=keys.open_approvals(session_id),
        round_key=keys.round_(session_id),
        votes_key=keys.votes(session_id, approval_id),
        discussion_key=keys.discussion(session_id, approval_id),
        channel_open_key=keys.channel_open(shard, attempt.team_id, attempt.channel_id),
        members_key=keys.channel_members(attempt.team_id, attempt.channel_id, shard=shard),
        edit_key=keys.approval_edit(session_id, approval_id),
        **_shard_keys(shard, shard_count()),
    )
    attempt_args = _attempt_args(attempt, decided_ms=decided_ms, answer_by_ms=answer_by_ms)
    if decision is None:
        if not attempt.check:
            raise ValueError(f"approval_id=<{approval_id}> | only a check is judged without a decision to record")
        return request_keys, DECIDE.arg_list(**attempt_args, decision_record="")  # a check: the attempt alone
    filled_in = {"approved_by": (), "discussion": (), "input_digest": None, "updated_input": None}
    filled_in["edited_by"] = None
    if any(getattr(decision, name) != empty for name, empty in filled_in.items()):  # the script fills them in
        decision = decision.model_copy(update=filled_in)
    args = DECIDE.arg_list(
        *scripts.runs(update, *audit, JobQueue.script_resume(session_id), keys.schedule_entries(approval_id)),
        **attempt_args,
        decision_record=_decision_record(decision),
    )
    return request_keys, args


def _attempt_args(attempt: Attempt, *, decided_ms: int, answer_by_ms: int) -> dict[str, str]:
    """The attempt as the script's arguments, by the spec's names (``decide.lua`` builds its ``attempt`` of them).

    Flags are ``"1"`` or ``"0"``; an origin's missing field (the clock has none) is ``""``.
    """
    origin = attempt.origin or _NO_ORIGIN
    return {
        "attempt_approval_id": attempt.approval_id,
        "attempt_kind": attempt.kind,
        "attempt_user": attempt.user,
        "attempt_team_id": attempt.team_id,
        "attempt_channel_id": attempt.channel_id,
        "attempt_checks": "1" if attempt.origin is not None else "0",
        "origin_surface": origin.get("surface", ""),
        "origin_team_id": origin.get("team_id", ""),
        "origin_user_team_id": origin.get("user_team_id", ""),
        "origin_channel_id": origin.get("channel_id", ""),
        "origin_ts": origin.get("ts", ""),
        "origin_thread_ts": origin.get("thread_ts", ""),
        "attempt_reason_given": "1" if attempt.reason_given else "0",
        "attempt_written_at": attempt.written_at,
        "attempt_quorum": str(attempt.quorum),
        "attempt_groups": _json_list(attempt.groups),
        "attempt_replay": "1" if attempt.replay is not None else "0",
        "attempt_replay_ttl_s": str(attempt.replay_ttl_s),
        "attempt_recent_kept": _RECENT_KEPT_ARG,
        "attempt_decided_stamp": f"{decided_ms:013d}",
        "attempt_with_request": "1" if attempt.with_request else "0",
        "attempt_shown": attempt.shown,
        "attempt_trust": "1" if attempt.trust else "0",
        "attempt_answer_kind": attempt.answer_kind,
        "attempt_choices": _json_list(attempt.choices),
        "attempt_answer_by_ms": str(answer_by_ms),
        "attempt_check": "1" if attempt.check else "0",
        "attempt_grant": attempt.grant,
    }


_NO_ORIGIN: Final[dict[str, str]] = {}
_RECENT_KEPT_ARG: Final = str(RECENT_KEPT)


def _json_list(values: tuple[str, ...] | tuple[int, ...]) -> str:
    """A short list as JSON (most are empty: ``"[]"`` without the encoder)."""
    return json.dumps(list(values)) if values else "[]"


@lru_cache(maxsize=1024)
def _shard_keys(shard: int, shards: int) -> dict[str, str]:
    """The shard structures' keys, by the spec's names: the same strings for every click of the shard.

    ``shards`` is part of the cache key only: a process that changes the shard count never reads a stale tag.
    """
    return {
        "jobs_key": keys.jobs(shard),
        **Outbox.script_named_keys(shard),
        "audit_key": keys.audit(shard),
        "schedule_due_key": keys.schedule_due(shard),
        "schedule_steps_key": keys.schedule_steps(shard),
        "open_index_key": keys.open_index(shard),
        "open_by_key": keys.open_by(shard),
        "recent_by_key": keys.recent_by(shard),
    }


_FILLED_IN: Final = frozenset({"approved_by", "discussion", "input_digest", "updated_input", "edited_by", "answer"})
"""The decision record's fields the decide script fills in where they stand: always written, even empty."""


def _decision_record(decision: Decision) -> str:
    """The decision as the script records it (JSON): no field at its default, but the ones it fills in.

    Read back, a field left out takes its default again.
    """
    # Serialized once: which fields hold their default is read off the record, not from a first dump of it.
    left_out = {name for name, default in _DEFAULTS if getattr(decision, name) == default}
    return decision.model_dump_json(exclude=left_out)


_DEFAULTS: Final = tuple(
    (name, field.get_default(call_default_factory=True))
    for name, field in Decision.model_fields.items()
    if not field.is_required() and name not in _FILLED_IN
)
"""The decision's fields a record leaves out at their default (pydantic's ``exclude_defaults``), and the default."""


_TERMS: Final[dict[str, Any]] = {  # what of a request ``terms`` keeps (pydantic's include)
    "team_id": True,
    "channel_id": True,
    "thread_ts": True,
    "message_ts": True,
    "requested_by": True,
    "input_digest": True,
    # An answer fits a question only (and its kind: words, options it offers, a form), an approval or a denial an
    # approval only. Not its text or schema: a click is judged by labels at most (a few kilobytes for 100 options).
    "question": {"kind": True, "multiple": True, "other": True, "options": {"__all__": {"label"}}},
    "trust_offered": True,
    "answer_offered": True,
    "policy": {
        "name",  # not judged by: read by the metrics (pending approvals by policy), a few bytes
        "approver_users",
        "approver_groups",
        "also_approvers",
        "allow_external",
        "allow_self_approval",
        "reason_required_on_deny",
        "tier",
        "quorum",
        "edits",
    },
}


def terms(request: ApprovalRequest) -> str:
    """What the decide script judges an attempt by, kept apart from the request (JSON, the request's own names).

    Its place, its asker and the rules of its policy: a few hundred bytes, where the request holds the tool's
    whole input. A click decodes these, so it costs the same for a one-line command as for a file's contents. A field
    that holds its default is left out (the scripts read a missing one as its default: false, empty, ``ask``, 1).
    """
    return request.model_dump_json(include=_TERMS, exclude_defaults=True)
