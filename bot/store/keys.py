"""Every Redis key the bot uses, built in one place.

Sessions are spread over ``REDIS_SHARDS`` shards (``state.store``). Per-session keys carry their
shard's hash tag, then the session id in braces (which only delimits it: Redis hashes the first
``{...}``); every structure written in the same atomic step as a session (jobs, outbox, schedule,
open indexes, audit, recent decisions, ...) is kept per shard under the same tag. So each Lua script
and MULTI of the bot touches one Redis Cluster slot, and readers of those structures merge every
shard (``shards()``). Nothing grows without bound: decided approvals and idle threads expire after
the retention period (``RETENTION_DAYS``), the audit streams are trimmed by the worker.

Per session (``<s>`` is ``{<shard tag>}:{<session id>}``)::

    signoff:<s>:thread                     hash    team_id, channel_id, thread_ts, requested_by
    signoff:<s>:round                      hash    version (session version when it stopped), approval ids,
                                                   published (last session version whose outcome was posted)
    signoff:<s>:open                       set     approval ids of the round still waiting for a decision
    signoff:<s>:approval:<aid>             hash    request (JSON), decision (JSON), message_ts, post_entry,
                                                   version (bumped with each queued message update)
    signoff:<s>:updating:<aid>             string  token of the delivery updating the approval's messages (lease)
    signoff:<s>:shown:<aid>                string  the version the approval's messages show (TTL)
    signoff:<s>:discussion:<aid>           list    thread replies while the approval was open (JSON)
    signoff:<s>:votes:<aid>                set     approvers counted toward a quorum
    signoff:<s>:edit:<aid>                 hash    the input an approver edited the pending call to (and who, when)
    signoff:<s>:api                        hash    a request made through the HTTP API (``api:<id>`` sessions):
                                                   record (JSON), cancelled, notified (callback delivered)
    signoff:<s>:trusts                     hash    tool -> who trusted it for the rest of the session (JSON)
    signoff:<s>:grant-revoked:<aid>:<gid>  string  a revoke's fence: the decide script refuses that grant's decision
                                                   of that approval (``GrantStore.revoke`` writes it; TTL a day)

Per shard (``<t>`` is ``{<shard tag>}``)::

    signoff:<t>:approval:<aid>:session     string  the approval's session id (buttons carry the approval id,
                                                   whose prefix names the shard: ``approval_shard``)
    signoff:<t>:open-approvals             zset    approval ids waiting in the shard, by request time (ms)
    signoff:<t>:channel:<team>:<cid>:open  zset    approval ids waiting in one channel, by request time (ms)
    signoff:<t>:team:<team>:open-channels  set     channels of the workspace where an approval of the shard was opened
                                                   (one whose channel index is empty is dropped as it is read)
    signoff:<t>:recent-decisions           zset    latest decided approval ids, by decision time: written by versions
                                                   before ``recent-by``, read once by the index build, then deleted
    signoff:<t>:open-by                    zset    the shard's open approvals per workspace and per named approver, as
                                                   members ordered by name (score 0): ``w:<team>:<ms>:<aid>``,
                                                   ``a:<team>:<uid>:<ms>:<aid>`` (``<ms>``: request time, 13 digits;
                                                   ``approvals.approval_index``). Read a page per shard and merged
    signoff:<t>:recent-by                  zset    the shard's latest decisions per workspace and per person (decider,
                                                   voters, requester): ``w:<team>:<ms>:<aid>``,
                                                   ``p:<team>:<uid>:<ms>:<aid>`` (decision time); each prefix keeps
                                                   its newest ``RECENT_KEPT`` to twice that
    signoff:<t>:quarantine                 hash    approval id -> why it cannot be read back (JSON), for operators
    signoff:<t>:schedule, signoff:<t>:schedule:entries  zset, hash  reminders, escalations, expiries by due time
    signoff:<t>:jobs                       stream  start and resume jobs (consumer group "workers")
    signoff:<t>:job:<job_id>:told          string  the job's thread was told its step is delayed (TTL)
    signoff:<t>:outbox                     zset    outbox entry ids by due time (ms)
    signoff:<t>:outbox:entries             hash    outbox entry id -> entry (JSON)
    signoff:<t>:outbox:wake                list    a token per new entry, so the dispatcher wakes at once
    signoff:<t>:outbox:claims              hash    outbox entry id -> times claimed (above 1: an earlier holder died)
    signoff:<t>:<queue>:taken:<token>      list    the ids one claim of a due queue took (``bot.store.queues.due``; TTL)
    signoff:<t>:uninstalls:due             zset    uninstalls Slack was answered for and a worker owes, by due time
    signoff:<t>:uninstalls:owed            hash    owed uninstall id (its event's) -> what to end (JSON; shard 0 only)
    signoff:<t>:outbox:posted:<entry_id>   string  where the entry's message was posted (the copy kept; TTL)
    signoff:<t>:outbox:dead                hash    outbox entry id -> the entry and why it was not delivered (JSON)
    signoff:<t>:outbox:home-cooling:<team>:<uid>  string  set for ``HOME_REFRESH_SECONDS`` after a person's App Home
                                                   was published: the next refresh waits until it ends (TTL)
    signoff:<t>:audit                      stream  who did what, when
    signoff:<t>:audit:exported             string  id of the shard's last audit entry exported (trimming keeps the rest)
    signoff:<t>:seen-signature:<signature> string  an Approve click's signature, checked and recorded by the decide
                                                   script in the slot of the session it acts on (replays; TTL)
    signoff:<t>:usergroup:<team>:<gid>     string  the shard's copies of a group's and a channel's cached members,
    signoff:<t>:channel-members:<team>:<cid>  set  read by the decide script (copied from the global ones, expiring
                                                   with them)

Global (each written alone, never in a script or transaction with another key)::

    signoff:home-seen:<team>               zset    users of a workspace whose App Home shows approvals, by when they
                                                   last opened it (ms): refreshed on a change they can see, forgotten
                                                   after ``HOME_VIEWER_HOURS``
    signoff:trusts-of:<team>:<uid>         zset    <session id>/<tool> of the trusts a person made or that serve
                                                   their requests, by time: App Home's listing (follows the records)
    signoff:event:<event_id>               string  Events API deliveries already handled (retries)
    signoff:seen-signature:<signature>     string  request signatures already accepted (replays), while still valid
    signoff:usergroup:<team>:<gid>         string  cached members of a workspace's user group (JSON, TTL)
    signoff:channel-members:<team>:<cid>   set     cached members of a workspace's channel (TTL)
    signoff:usergroup-known:<team>:<gid>   string  the members Slack last listed, kept a day: used while Slack
    signoff:channel-members-known:<team>:<cid>  set  cannot be asked (a click never waits for Slack to be up; TTL)
    signoff:deny-view:<external_id>        string  which approval and message a deny or edit modal was opened from (TTL)
    signoff:outbox:lane:{<team>:<cid>}[/<ts>]  string  the delivery sending to one conversation, or the failed
                                                   entry its later messages wait for ("hold:<entry id>:<until ms>"; TTL)
    signoff:outbox:paused:{<team>:<cid>}   string  until when (ms) Slack asked for no more posts in a channel (a 429;
                                                   TTL); its lanes wait, then start a second apart for a minute
                                                   ("<until>:<next ms>"). A lane and its channel's pause: one slot
    signoff:outbox:paused-method:<team>:<method>  string  until when (ms) Slack asked for no more calls of a method in
                                                   a workspace (a 429 on any method but chat.postMessage; TTL)
    signoff:installation:<team>            string  a workspace's installation (bot token, bot and app ids, installer;
    signoff:installation:E:<enterprise>    string  JSON), or an Enterprise Grid org's org-wide one (OAuth mode)
    signoff:installation-org:<team>        string  the Enterprise Grid org whose org-wide installation serves a
                                                   workspace (seen on its requests), for calls made outside one
    signoff:installation-org-teams:<enterprise>  set  the workspaces noted in ``installation-org`` for the org (its
                                                   uninstall's list: no scan)
    signoff:layout:indexes                 string  the version of the indexes ``migrate --indexes`` built from the
                                                   records (the worker builds them at start when it is older)
    signoff:oauth-state:<state>            string  an OAuth ``state`` issued by /slack/install, consumed once (TTL)
    signoff:clock:offset_ms                string  how far a sandbox moved its virtual clock ahead (ms)
    signoff:layout:shards                  string  the REDIS_SHARDS the data was written with (another is refused)
    signoff:worker-heartbeats              zset    worker (consumer name) -> its last heartbeat (unix ms); members
                                                   older than the freshness bound are pruned, the key has a TTL

API keys (one hash tag of their own: creating or revoking a key is one transaction, in one slot)::

    signoff:{api-keys}:clients             hash    API client name -> its key's SHA-256 and callback secret (JSON)
    signoff:{api-keys}:key:<sha256>        string  the client name of an API key (the key itself is never stored)

Standing approvals (``<g>`` is ``{grants:<team>:<cid>}``: a channel's grants share one slot, so a use and a
revoke are atomic with each other)::

    signoff:<g>:grants                     hash    grant id -> the grant (JSON); <id>:uses; <id>:revoking, :revoked-by
    signoff:<g>:calls:<digest>             zset    grant ids covering one exact call (tool and input), by expiry (ms)
    signoff:<g>:used-by:<approval id>      string  the grant an approval's use counted (once per approval; TTL a day)
    signoff:<g>:in-flight                  zset    <grant id>:<session id>:<approval id> by use time (ms): uses that
                                                   may decide (a revoke fences each); older ones are dropped
    signoff:grants:live                    zset    <team>:<cid>:<grant id> of every live grant, by expiry (ms): the
                                                   listing's index, written alone (following the grants' records)
    signoff:grants:revoking                zset    <team>:<cid>:<grant id> of the revokes owed, by next try (ms)
    signoff:<t>:grant-revoke-audited:<team>:<cid>:<grant id>  string  its revoke is audited (TTL)
    signoff:grants-of:<team>:<uid>         zset    <cid>:<grant id> by expiry: grants a person made or is covered by

Members: a request's scheduled steps are ``<approval id>:<kind>`` in the schedule (``schedule_entry``).
"""

import re
from functools import lru_cache
from typing import Final

from state import store
from state.store import keys_for, shard_count, shard_tag

JOBS_GROUP: Final = "workers"
CLOCK_OFFSET: Final = "signoff:clock:offset_ms"
SHARD_LAYOUT: Final = "signoff:layout:shards"
INDEXES_BUILT: Final = "signoff:layout:indexes"
SCHEDULE_KINDS: Final = ("remind", "escalate", "expire")
API_CLIENTS: Final = "signoff:{api-keys}:clients"
WORKER_HEARTBEATS: Final = "signoff:worker-heartbeats"
_SHARD_IN_APPROVAL_ID: Final = re.compile(r"^(\d{1,4})-")


def shard_of(session_id: str) -> int:
    """The shard of ``session_id``: its keys and the shard structures written with them share its tag."""
    return store.shard_of(session_id)


def shards() -> range:
    """Every shard, for readers that merge them."""
    return range(shard_count())


def _shard_prefix(shard: int) -> str:
    return f"signoff:{{{shard_tag(shard)}}}"


def _session_prefix(session_id: str) -> str:
    return _prefix_with(session_id, shard_count())


@lru_cache(maxsize=4096)
def _prefix_with(session_id: str, shards: int) -> str:
    # keys_for validates the id as the session store does (braces would break the tag) and gives its shard's tag.
    # Cached: a click builds a dozen of one session's keys (a CRC and a validation each); the shard count is part
    # of the cache key, so a process that sets REDIS_SHARDS after a first lookup never reads a stale tag.
    return keys_for(session_id).session.removesuffix(":session")


def approval_id(session_id: str, base_id: str) -> str:
    """An approval id naming its session's shard (``<shard>-<base_id>``): a button's value finds its keys at once."""
    return f"{shard_of(session_id)}-{base_id}"


def approval_shard(approval_id: str) -> int | None:
    """The shard an approval id names (``None``: an id without one, minted before shards, or not ours)."""
    match = _SHARD_IN_APPROVAL_ID.match(approval_id)
    if match is None or int(match.group(1)) >= shard_count():
        return None
    return int(match.group(1))


def jobs(shard: int) -> str:
    """The shard's stream of start and resume jobs."""
    return f"{_shard_prefix(shard)}:jobs"


def job_told(shard: int, job_id: str) -> str:
    """Marks a job whose thread was told that its step is delayed (told once, however many retries)."""
    return f"{_shard_prefix(shard)}:job:{job_id}:told"


def open_index(shard: int) -> str:
    """Approval ids waiting in the shard, by request time."""
    return f"{_shard_prefix(shard)}:open-approvals"


def channel_open(shard: int, team_id: str, channel_id: str) -> str:
    """Approval ids of the shard waiting in one channel of one workspace."""
    return f"{_shard_prefix(shard)}:channel:{team_id}:{channel_id}:open"


def recent_decisions(shard: int) -> str:
    """The shard's latest decided approval ids, as versions before ``recent_by`` kept them (the index build's)."""
    return f"{_shard_prefix(shard)}:recent-decisions"


def open_channels(shard: int, team_id: str) -> str:
    """The channels of a workspace where approvals of the shard were opened (App Home reads those it may see)."""
    return f"{_shard_prefix(shard)}:team:{team_id}:open-channels"


def open_by(shard: int) -> str:
    """The shard's open approvals per workspace and per named approver (``bot.store.approvals.approval_index``)."""
    return f"{_shard_prefix(shard)}:open-by"


def recent_by(shard: int) -> str:
    """The shard's latest decisions per workspace and per person (``bot.store.approvals.approval_index``)."""
    return f"{_shard_prefix(shard)}:recent-by"


def quarantine(shard: int) -> str:
    """The shard's unreadable approvals and why, for operators."""
    return f"{_shard_prefix(shard)}:quarantine"


def approval_session(shard: int, approval_id: str) -> str:
    """Which session an approval of the shard belongs to."""
    return f"{_shard_prefix(shard)}:approval:{approval_id}:session"


def schedule_due(shard: int) -> str:
    """The shard's reminders, escalations and expiries by due time."""
    return f"{_shard_prefix(shard)}:schedule"


def schedule_steps(shard: int) -> str:
    """The shard's schedule entries (id -> JSON)."""
    return f"{_shard_prefix(shard)}:schedule:entries"


def outbox_due(shard: int) -> str:
    """The shard's outbox entry ids by due time."""
    return f"{_shard_prefix(shard)}:outbox"


def uninstalls_due(shard: int) -> str:
    """The uninstalls a worker owes (acked to Slack, not carried out yet), by when it may take them (shard 0's)."""
    return f"{_shard_prefix(shard)}:uninstalls:due"


def uninstalls_owed(shard: int) -> str:
    """The uninstalls a worker owes: id -> what to end (JSON)."""
    return f"{_shard_prefix(shard)}:uninstalls:owed"


def outbox_entries(shard: int) -> str:
    """The shard's outbox entries (id -> JSON)."""
    return f"{_shard_prefix(shard)}:outbox:entries"


def outbox_wake(shard: int) -> str:
    """A token per new entry of the shard's outbox, so a dispatcher wakes at once."""
    return f"{_shard_prefix(shard)}:outbox:wake"


def outbox_claims(shard: int) -> str:
    """How many times each of the shard's outbox entries was claimed."""
    return f"{_shard_prefix(shard)}:outbox:claims"


def claim_record(shard: int, queue: str, token: str) -> str:
    """The ids one claim of a due queue took, kept a lease: the next claim takes them back if the reply was lost."""
    return f"{_shard_prefix(shard)}:{queue}:taken:{token}"


def outbox_dead(shard: int) -> str:
    """The shard's outbox entries that were not delivered, and why."""
    return f"{_shard_prefix(shard)}:outbox:dead"


def outbox_posted(shard: int, entry_id: str) -> str:
    """Which copy of an outbox entry's message was kept (the first attempt to record one wins)."""
    return f"{_shard_prefix(shard)}:outbox:posted:{entry_id}"


def audit(shard: int) -> str:
    """The shard's audit stream."""
    return f"{_shard_prefix(shard)}:audit"


def audit_exported(shard: int) -> str:
    """Id of the shard's last exported audit entry."""
    return f"{_shard_prefix(shard)}:audit:exported"


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


def discussion(session_id: str, approval_id: str) -> str:
    """Thread replies collected for one approval."""
    return f"{_session_prefix(session_id)}:discussion:{approval_id}"


def votes(session_id: str, approval_id: str) -> str:
    """Approvers counted toward one approval's quorum."""
    return f"{_session_prefix(session_id)}:votes:{approval_id}"


def approval_edit(session_id: str, approval_id: str) -> str:
    """The input an approver edited one pending call to (``bot.store.approvals.edits``)."""
    return f"{_session_prefix(session_id)}:edit:{approval_id}"


def event_seen(event_id: str) -> str:
    """Marks an Events API delivery as handled."""
    return f"signoff:event:{event_id}"


def usergroup(team_id: str, group_id: str, *, shard: int | None = None) -> str:
    """Cached members of a workspace's user group (a shard's copy: the one a click's script reads in its slot)."""
    return f"{_shard_prefix(shard) if shard is not None else 'signoff'}:usergroup:{team_id}:{group_id}"


def seen_signature(signature: str, *, shard: int | None = None) -> str:
    """Marks a request signature as used (a replay reuses it); a click's, on its session's shard (its script's slot)."""
    return f"{_shard_prefix(shard) if shard is not None else 'signoff'}:seen-signature:{signature}"


def channel_members(team_id: str, channel_id: str, *, shard: int | None = None) -> str:
    """Cached members of a workspace's channel (a shard's copy: the one a click's script reads in its slot)."""
    return f"{_shard_prefix(shard) if shard is not None else 'signoff'}:channel-members:{team_id}:{channel_id}"


def channel_members_known(team_id: str, channel_id: str) -> str:
    """The members Slack last listed for a workspace's channel, kept long after the cache expires (Slack out)."""
    return f"signoff:channel-members-known:{team_id}:{channel_id}"


def usergroup_known(team_id: str, group_id: str) -> str:
    """The members Slack last listed for a workspace's user group, kept long after the cache expires (Slack out)."""
    return f"signoff:usergroup-known:{team_id}:{group_id}"


def home_viewers(team_id: str) -> str:
    """The users of ``team_id`` whose App Home shows approvals, by when they last opened it."""
    return f"signoff:home-seen:{team_id}"


def home_cooling(shard: int, team_id: str, user_id: str) -> str:
    """Set while ``user_id``'s App Home in ``team_id`` was just published: the next waits out its TTL (outbox slot)."""
    return f"{_shard_prefix(shard)}:outbox:home-cooling:{team_id}:{user_id}"


def installation(*, team_id: str | None, enterprise_id: str | None, org_wide: bool) -> str:
    """A workspace's installation of the app, or an Enterprise Grid org's org-wide one (``org_wide``)."""
    return f"signoff:installation:E:{enterprise_id}" if org_wide else f"signoff:installation:{team_id}"


def installation_org(team_id: str) -> str:
    """The Enterprise Grid org whose org-wide installation serves ``team_id``."""
    return f"signoff:installation-org:{team_id}"


def installation_org_teams(enterprise_id: str) -> str:
    """The workspaces noted as served by the org-wide installation of ``enterprise_id``."""
    return f"signoff:installation-org-teams:{enterprise_id}"


def oauth_state(state: str) -> str:
    """An OAuth ``state`` the install page issued, valid until consumed once or expired."""
    return f"signoff:oauth-state:{state}"


def modal_view(external_id: str) -> str:
    """The approval and message a deny or edit modal was opened from (checked when it is submitted)."""
    return f"signoff:deny-view:{external_id}"  # named when only Deny opened one: views open then still submit


def schedule_entry(approval_id: str, kind: str) -> str:
    """The schedule's entry for one kind of step (``SCHEDULE_KINDS``) of a request: a decision finds it unread."""
    return f"{approval_id}:{kind}"


def schedule_entries(approval_id: str) -> list[str]:
    """Every schedule entry a request can have (a decision cancels them all)."""
    return [schedule_entry(approval_id, kind) for kind in SCHEDULE_KINDS]


def outbox_lane(lane: str) -> str:
    """Who may send to one conversation now (one delivery at a time, in the order entries were queued).

    Tagged with the conversation's channel (a thread's lane is ``<channel>/<thread ts>``): the lanes of one
    channel and its pause (``outbox_channel_pause``) share a slot, as the script taking a lane reads both.
    """
    channel, slash, rest = lane.partition("/")
    return f"signoff:outbox:lane:{{{_lane_tag(channel)}}}{slash}{rest}"


def outbox_channel_pause(lane: str) -> str:
    """Until when Slack asked for nothing more in the channel of ``lane`` (a 429's Retry-After, outbox clock ms)."""
    return f"signoff:outbox:paused:{{{_lane_tag(lane.partition('/')[0])}}}"


def outbox_method_pause(team_id: str, method: str) -> str:
    """Until when Slack asked for no more calls of a Web API method in a workspace (a 429's Retry-After, outbox ms)."""
    return f"signoff:outbox:paused-method:{team_id}:{method}"


def _lane_tag(channel: str) -> str:
    # An empty hash tag would hash the whole key: the lane and its pause would land in different slots.
    return channel or "-"


GRANTS_LIVE: Final = "signoff:grants:live"
GRANTS_REVOKING: Final = "signoff:grants:revoking"


def grant_revoke_audited(team_id: str, channel_id: str, grant_id: str) -> str:
    """Marks a revoke audited (``grant_revoked`` once, however often it is tried): in the audit stream's slot."""
    return f"{_shard_prefix(0)}:grant-revoke-audited:{team_id}:{channel_id}:{grant_id}"


def grants_of(team_id: str, user_id: str) -> str:
    """The live grants a person made or that cover their requests, by expiry (App Home's listing)."""
    return f"signoff:grants-of:{team_id}:{user_id}"


def grants(team_id: str, channel_id: str) -> str:
    """A channel's standing approvals (how often each was used; ``<grant id>:revoking``: one whose revoke is owed)."""
    return f"signoff:{{grants:{team_id}:{channel_id}}}:grants"


def grant_calls(team_id: str, channel_id: str, digest: str) -> str:
    """The channel's standing approvals covering one exact call (``bot.domain.grants.call_digest``)."""
    return f"signoff:{{grants:{team_id}:{channel_id}}}:calls:{digest}"


def grant_used_by(team_id: str, channel_id: str, approval_id: str) -> str:
    """Which grant an approval's call counted a use of (``USE_GRANT``: a publish tried again counts none)."""
    return f"signoff:{{grants:{team_id}:{channel_id}}}:used-by:{approval_id}"


def grant_in_flight(team_id: str, channel_id: str) -> str:
    """The channel's grant uses whose decision may still be written, by use time (``USE_GRANT`` adds, drops old)."""
    return f"signoff:{{grants:{team_id}:{channel_id}}}:in-flight"


def grant_revoked(session_id: str, approval_id: str, grant_id: str) -> str:
    """A revoke's fence in the session's slot: ``grant_id`` may no longer decide ``approval_id`` (the decide script)."""
    return f"{_session_prefix(session_id)}:grant-revoked:{approval_id}:{grant_id}"


def trusts(session_id: str) -> str:
    """The tools trusted for the rest of a session (``bot.store.access.trusts``)."""
    return f"{_session_prefix(session_id)}:trusts"


def trusts_of(team_id: str, user_id: str) -> str:
    """A person's listing of the trusts they made or that serve their requests (App Home)."""
    return f"signoff:trusts-of:{team_id}:{user_id}"


def api_key(key_sha256: str) -> str:
    """The client name an API key (by its SHA-256) authenticates."""
    return f"signoff:{{api-keys}}:key:{key_sha256}"


def api_request(session_id: str) -> str:
    """A request made through the HTTP API: what the client asked, and whether it was told the outcome."""
    return f"{_session_prefix(session_id)}:api"
