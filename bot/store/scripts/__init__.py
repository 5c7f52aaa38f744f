"""Every Lua script the bot runs: the ``.lua`` files of this package, each with its spec here (``LuaScript``).

The session store's own scripts are ``state.store``'s, the Strands repository's ``agent.strands_bridge``'s.
Each script is one atomic step on one hash slot: its KEYS come only from ``bot.store.keys`` functions, so that the
Redis Cluster layout changes in one place. Its spec names its KEYS and ARGV in order; the prelude Redis runs before the
file's body (``state.lua``) makes each name a local, and callers build a call's KEYS and ARGV by the same names
(``key_list``, ``arg_list``). Each file says what its KEYS and ARGV hold and what it returns.

Records a script writes for another owner (an outbox entry, a job, an audit event) arrive ready made from that owner as
a run of arguments (``Outbox.script_entry``, ``JobQueue.script_resume``, ``Audit.script_events``: a ``ScriptRecord``),
each run preceded by its length, and the owner supplies the Lua that writes it (``owners/<owner>.lua``: the outbox's,
the jobs', the audit's, the approval's version and votes, the schedule's steps): a script never spells another
owner's record, and nothing is JSON-encoded only to be decoded again inside Redis (a click waits for both).
Owners register the scripts they run (``client.register_script(SCRIPT.text)``).

The decide script (a click's one round trip) is ``bot.store.scripts.decide``; every other script is here.
"""

from collections.abc import Sequence
from typing import Final, TypeAlias

from bot.store.scripts.decide import DECIDE
from bot.store.scripts.spec import script

ScriptRecord: TypeAlias = tuple[str, ...]
"""A record one owner made for a script to write: a run of arguments (the script is told where it starts)."""


def runs(*records: Sequence[str]) -> list[str]:
    """``records`` as a script reads them (``owners/runs.lua``'s ``runs_from``): each its length, then its arguments."""
    listed: list[str] = []
    for record in records:  # a list extended: no tuple made for each record (a click's 60 arguments)
        listed.append(str(len(record)))
        listed += record
    return listed


CLAIM_APPROVAL: Final = script(
    "claim_approval", keys=("approval_key", "due_key"), args=("user", "until_ms", "entry_id"), owners=("schedule",)
)
FENCED_WRITES: Final = script(
    "fenced_writes", keys=("fence_key",), args=("entry_id", "lease_end_ms"), more_keys=True, more_args=True
)
CLAIM_DUE: Final = script(
    "claim_due",
    keys=("due_key", "entries_key", "record_key"),
    args=("now_ms", "lease_ms", "limit", "lost_count"),
    more_keys=True,
    more_args=True,
)
COMPLETE_POST: Final = script(
    "complete_post",
    keys=("posted_key", "due_key", "entries_key", "claims_key"),
    optional_keys=("caller_key", "open_by_key"),
    args=("entry_id", "copy", "ttl_s", "open_by_prefix", "approval_id"),
    more_args=True,
)
WANT_HOME: Final = script(
    "want_home",
    keys=("due_key", "entries_key", "wake_key", "cooling_key"),
    args=("entry_id", "entry", "now_ms", "wake_kept"),
)
COMPLETE_HOME: Final = script(
    "complete_home",
    keys=("due_key", "entries_key", "claims_key", "cooling_key"),
    args=("entry_id", "mark", "now_ms", "cooling_ms"),
)
PENDING_BY_POLICY: Final = script("pending_by_policy", keys=("open_by_key",), args=("rules_prefix",), more_args=True)
SHOWN_IF_HELD: Final = script("shown_if_held", keys=("shown_key", "lease_key"), args=("token", "version", "ttl_s"))
RELEASE_IF_HELD: Final = script("release_if_held", keys=("lease_key",), args=("token",))
REDELIVER_JOB: Final = script("redeliver_job", keys=("stream_key",), args=("group", "consumer", "job_id", "mode"))
PRUNE_CONSUMERS: Final = script("prune_consumers", keys=("stream_key",), args=("group", "idle_ms", "keep"))
LEAVE_GROUP: Final = script("leave_group", keys=("stream_key",), args=("group", "leaving"))
TAKE_LANE: Final = script(
    "take_lane",
    keys=("lane_key", "pause_key"),
    args=("token", "now_ms", "lease_ms", "first_entry", "pace_ms"),
)
LEAVE_LANE: Final = script("leave_lane", keys=("lane_key",), args=("token", "put_back", "now_ms", "hold_ms"))
USE_GRANT: Final = script(
    "use_grant",
    keys=("grants_key", "exact_key", "fields_key", "counted_key", "in_flight_key"),
    args=(
        "clock_offset_ms",
        "rule",
        "requester",
        "self_allowed",
        "terms",
        "longest_ms",
        "field_digests",
        "use_member",
        "kept_ms",
    ),
)
REVOKE_GRANT: Final = script(
    "revoke_grant", keys=("grants_key", "calls_key", "in_flight_key"), args=("grant_id", "kept_ms", "actor")
)
FENCE_GRANT_USES: Final = script("fence_grant_uses", keys=("fence_key",), args=("kept_s",), more_keys=True)
EDIT_CALL: Final = script(
    "edit_call",
    keys=(
        "approval_key",
        "edit_key",
        "votes_key",
        "open_set_key",
        "outbox_due_key",
        "outbox_entries_key",
        "outbox_wake_key",
        "audit_key",
    ),
    args=("edit_json", "input"),
    more_args=True,
    owners=("runs", "approvals", "outbox", "audit"),
)
INDEX_OPEN: Final = script("index_open", keys=("approval_key", "open_by_key"), args=("indexed",), more_args=True)
QUARANTINE: Final = script(
    "quarantine",
    keys=("approval_key", "open_key", "open_by_key", "notes_key"),
    args=("approval_id", "note"),
    owners=("approval_index",),
)
DROP_IDLE_CHANNEL: Final = script("drop_idle_channel", keys=("channels_key", "channel_open_key"), args=("channel_id",))

EVERY_SPEC: Final = (
    DECIDE,
    CLAIM_APPROVAL,
    FENCED_WRITES,
    CLAIM_DUE,
    COMPLETE_POST,
    WANT_HOME,
    COMPLETE_HOME,
    PENDING_BY_POLICY,
    QUARANTINE,
    SHOWN_IF_HELD,
    RELEASE_IF_HELD,
    REDELIVER_JOB,
    PRUNE_CONSUMERS,
    LEAVE_GROUP,
    TAKE_LANE,
    LEAVE_LANE,
    USE_GRANT,
    REVOKE_GRANT,
    FENCE_GRANT_USES,
    EDIT_CALL,
    INDEX_OPEN,
    DROP_IDLE_CHANNEL,
)
"""Every script of the package (the Lua lint and the tests load each)."""

EVERY_SCRIPT: Final = tuple(spec.text for spec in EVERY_SPEC)
"""Every script's text, for the readiness probe: each must be loaded on the server, or loadable."""
