"""Every Redis key the bot uses, built in one place.

Per-session keys carry the session's hash tag ``{session_id}`` (one Cluster slot, as in
``state.store``). Nothing grows without bound: decided approvals and idle threads expire after
the retention period (``RETENTION_DAYS``), the audit stream is trimmed by the worker::

    signoff:{<sid>}:thread                 hash    team_id, channel_id, thread_ts, requested_by
    signoff:{<sid>}:round                  hash    version (session version when it stopped), approval ids,
                                                   published (last session version whose outcome was posted)
    signoff:{<sid>}:open                   set     approval ids of the round still waiting for a decision
    signoff:{<sid>}:approval:<aid>         hash    request (JSON), decision (JSON), message_ts, post_entry,
                                                   version (bumped with each queued message update)
    signoff:{<sid>}:updating:<aid>         string  token of the delivery updating the approval's messages (lease)
    signoff:{<sid>}:shown:<aid>            string  the version the approval's messages show (TTL)
    signoff:{<sid>}:discussion:<aid>       list    thread replies while the approval was open (JSON)
    signoff:{<sid>}:votes:<aid>            set     approvers counted toward a quorum

Global keys::

    signoff:approval:<aid>:session         string  the approval's session id (buttons carry the approval id)
    signoff:open-approvals                 zset    approval ids waiting anywhere, by request time (ms)
    signoff:channel:<team>:<cid>:open      zset    approval ids waiting in one channel, by request time (ms)
    signoff:recent-decisions               list    latest decided approval ids (App Home)
    signoff:home-viewers                   set     users whose App Home shows approvals (refreshed on change)
    signoff:quarantine                     hash    approval id -> why it cannot be read back (JSON), for operators
    signoff:schedule, signoff:schedule:entries  zset, hash  reminders, escalations, expiries by due time
    signoff:jobs                           stream  start and resume jobs (consumer group "workers")
    signoff:job:<job_id>:told              string  the job's thread was told its step is delayed (TTL)
    signoff:outbox                         zset    outbox entry ids by due time (ms)
    signoff:outbox:entries                 hash    outbox entry id -> entry (JSON)
    signoff:outbox:wake                    list    a token per new entry, so the dispatcher wakes at once
    signoff:outbox:claims                  hash    outbox entry id -> times claimed (above 1: an earlier holder died)
    signoff:outbox:posted:<entry_id>       string  where the entry's message was posted (the copy kept; TTL)
    signoff:outbox:dead                    hash    outbox entry id -> the entry and why it was not delivered (JSON)
    signoff:audit                          stream  who did what, when
    signoff:audit:exported                 string  id of the last audit entry exported (trimming keeps the rest)
    signoff:event:<event_id>               string  Events API deliveries already handled (retries)
    signoff:seen-signature:<signature>     string  request signatures already accepted (replays), while still valid
    signoff:usergroup:<group_id>           string  cached members of a user group (JSON, TTL)
    signoff:channel-members:<cid>          set     cached members of a channel (TTL)
    signoff:deny-view:<external_id>        string  which approval and message a deny modal was opened from (TTL)
    signoff:clock:offset_ms                string  how far a sandbox moved its virtual clock ahead (ms)

Members: a request's scheduled steps are ``<approval id>:<kind>`` in the schedule (``schedule_entry``).
"""

from typing import Final

from state.store import keys_for

OPEN_INDEX: Final = "signoff:open-approvals"
RECENT_DECISIONS: Final = "signoff:recent-decisions"
HOME_VIEWERS: Final = "signoff:home-viewers"
QUARANTINE: Final = "signoff:quarantine"
SCHEDULE_DUE: Final = "signoff:schedule"
SCHEDULE_ENTRIES: Final = "signoff:schedule:entries"
JOBS: Final = "signoff:jobs"
JOBS_GROUP: Final = "workers"
OUTBOX_DUE: Final = "signoff:outbox"
OUTBOX_ENTRIES: Final = "signoff:outbox:entries"
OUTBOX_WAKE: Final = "signoff:outbox:wake"
OUTBOX_CLAIMS: Final = "signoff:outbox:claims"
OUTBOX_DEAD: Final = "signoff:outbox:dead"
AUDIT: Final = "signoff:audit"
AUDIT_EXPORTED: Final = "signoff:audit:exported"
CLOCK_OFFSET: Final = "signoff:clock:offset_ms"
SCHEDULE_KINDS: Final = ("remind", "escalate", "expire")


def _session_prefix(session_id: str) -> str:
    keys_for(session_id)  # the same validation as the session store: braces would break the tag
    return f"signoff:{{{session_id}}}"


def thread(session_id: str) -> str:
    """Where the session's thread lives and who started it."""
    return f"{_session_prefix(session_id)}:thread"


def round_(session_id: str) -> str:
    """The current round of approvals of the session."""
    return f"{_session_prefix(session_id)}:round"


def open_approvals(session_id: str) -> str:
    """Approval ids of the current round still waiting."""
    return f"{_session_prefix(session_id)}:open"


def approval(session_id: str, approval_id: str) -> str:
    """One approval: its request and, once decided, its decision."""
    return f"{_session_prefix(session_id)}:approval:{approval_id}"


def message_update_lease(session_id: str, approval_id: str) -> str:
    """Held by the one delivery updating an approval's messages, so updates apply in order."""
    return f"{_session_prefix(session_id)}:updating:{approval_id}"


def message_shown(session_id: str, approval_id: str) -> str:
    """The version an approval's messages show (the last update applied)."""
    return f"{_session_prefix(session_id)}:shown:{approval_id}"


def outbox_posted(entry_id: str) -> str:
    """Which copy of an outbox entry's message was kept (the first attempt to record one wins)."""
    return f"signoff:outbox:posted:{entry_id}"


def discussion(session_id: str, approval_id: str) -> str:
    """Thread replies collected for one approval."""
    return f"{_session_prefix(session_id)}:discussion:{approval_id}"


def approval_session(approval_id: str) -> str:
    """Which session an approval belongs to."""
    return f"signoff:approval:{approval_id}:session"


def votes(session_id: str, approval_id: str) -> str:
    """Approvers counted toward one approval's quorum."""
    return f"{_session_prefix(session_id)}:votes:{approval_id}"


def event_seen(event_id: str) -> str:
    """Marks an Events API delivery as handled."""
    return f"signoff:event:{event_id}"


def job_told(job_id: str) -> str:
    """Marks a job whose thread was told that its step is delayed (told once, however many retries)."""
    return f"signoff:job:{job_id}:told"


def usergroup(group_id: str) -> str:
    """Cached members of a user group."""
    return f"signoff:usergroup:{group_id}"


def seen_signature(signature: str) -> str:
    """Marks a request signature as used (a second request with it is a replay)."""
    return f"signoff:seen-signature:{signature}"


def channel_open(team_id: str, channel_id: str) -> str:
    """Approval ids waiting in one channel of one workspace."""
    return f"signoff:channel:{team_id}:{channel_id}:open"


def channel_members(channel_id: str) -> str:
    """Cached members of a channel."""
    return f"signoff:channel-members:{channel_id}"


def deny_view(external_id: str) -> str:
    """The approval and message a deny modal was opened from (checked when it is submitted)."""
    return f"signoff:deny-view:{external_id}"


def schedule_entry(approval_id: str, kind: str) -> str:
    """The schedule's entry for one kind of step (``SCHEDULE_KINDS``) of one request: deterministic, so a
    decision or a claim finds it without reading it."""
    return f"{approval_id}:{kind}"


def schedule_entries(approval_id: str) -> list[str]:
    """Every schedule entry a request can have (a decision cancels them all)."""
    return [schedule_entry(approval_id, kind) for kind in SCHEDULE_KINDS]
