"""Standing approvals in Redis: made, used, listed and revoked (``bot.domain.grants`` says what one covers).

A channel's grants live in one slot (``keys.grants``): using one (``USE_GRANT``, one round trip) and revoking it
(``REVOKE_GRANT``) are atomic with each other, so a revoke stops the very next call. A use decides its call later, in
the session's slot (``RoundPublisher``), and only within ``DECIDES_WITHIN_MS``: until then it is listed in flight
(``keys.grant_in_flight``, by Redis' time of the use; older ones are dropped). A revoke then fences each use listed
there in its session's slot (``keys.grant_revoked``), so the decide script refuses the grant's decision of any call
whose decision was not written by then. Until the fences are written (and held by ``REDIS_DECISION_REPLICAS``
replicas) the revoke is owed: its first step keeps the grant under ``<grant id>:revoking`` in the same hash, the
listings keep it (past its expiry too), and whoever lists it or tries again (App Home, ``python -m bot grants``)
finishes it, as the workers do (``keys.GRANTS_REVOKING``, listed before the first step, by next try; ``finish_owed``).
Whichever try gets past the first step audits it ``grant_revoked``, once (``keys.grant_revoke_audited``). One whose
grant is unreadable is finished, then kept there with no next try (score inf) for inspection.
The listing's index (``keys.GRANTS_LIVE``) is written on its own and only follows the grants: a grant is listed
while its own record is (or its revoke is owed). So does each person's listing (``keys.grants_of``: the grants they
made or that cover their requests), which App Home reads: a page of their own, whatever others hold.
"""

import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import redis
from pydantic import ValidationError

from bot.domain.grants import Grant, ListedGrant
from bot.store import keys, scripts
from bot.store.audit import Audit
from bot.store.direct_script import DirectScript
from state.text import as_text

logger = logging.getLogger(__name__)

_KEPT_AFTER_MS: Final = 86_400_000  # a channel's records outlive its last grant by a day (then expire)
_FENCE_KEPT_S: Final = 86_400  # far longer than a use may still decide
DECIDES_WITHIN_MS: Final = 600_000
"""A use decides its call only this soon after it (Redis' time): a publish stalled longer leaves the call to people,
so a revoke's fences (kept a day) outlive every decision they must stop."""
_CLOCKS_APART_MS: Final = 60_000
"""How far apart the clocks of two masters (the grant's and the session's) may be: a use stays listed that much longer
than it may decide (the decide script reads the session master's clock)."""
_OWED_RETRY_MS: Final = 15_000
"""How soon a worker tries an owed revoke after it was last tried (by anyone)."""
_OWED_LISTED: Final = float("inf")
"""An owed revoke's score in the listings (by expiry): never pruned as expired until it is finished."""
_AUDITED_KEPT_S: Final = 7 * 86_400
"""How long a revoke's audit is remembered as done: far longer than a revoke stays owed."""


@dataclass(frozen=True)
class Revoked:
    """What a revoke did (``GrantStore.revoke``)."""

    grant: Grant
    ended_now: bool
    """This call ended the grant (else it was being revoked already: a revoke tried again)."""
    finished: bool
    """Every use it had in flight is fenced (held by the replicas asked for): no call is decided by it any more.

    False: the grant covers no new call, but a call it was deciding may still be decided by it until the revoke is
    tried again (it stays listed, as being revoked, until then)."""


@dataclass(frozen=True)
class GrantUse:
    """A grant found covering a call, its use counted and listed in flight (``GrantStore.use``)."""

    grant: Grant
    used_ms: int
    """Redis' time of the use (ms, unmoved by a sandbox's clock)."""

    @property
    def decides_until_ms(self) -> int:
        """Redis' time after which the use decides nothing (``DECIDES_WITHIN_MS``)."""
        return self.used_ms + DECIDES_WITHIN_MS


@dataclass(frozen=True)
class Call:
    """A call a grant may cover: where it is asked, under which rule, for whom."""

    team_id: str
    channel_id: str
    digest: str
    rule: str
    requester: str | None
    self_approval: bool
    terms: str
    """Who may decide under the rule now (``deciders_digest``)."""
    longest_ms: int
    """The rule's longest grant now: no grant made longer ago than that covers the call."""
    pattern: str = ""
    """``pattern_key`` of its tool and asker: grants on picked fields of that tool ("": none may cover it)."""
    fields: dict[str, str] | None = None
    """``field_digests`` of its input."""


class GrantStore:
    """Reads and writes standing approvals. Thread-safe (redis-py pools connections)."""

    def __init__(self, client: redis.Redis, *, replicas: int = 0, audit: Audit | None = None) -> None:
        """Register the scripts; nothing is sent yet.

        ``replicas``: how many must hold a revoke (to be finished); ``audit``: where revokes are audited (its clock).
        """
        self._client = client
        self._audit = audit or Audit(client)
        self._use = client.register_script(scripts.USE_GRANT.text)
        self._revoke = DirectScript(client, scripts.REVOKE_GRANT.text, replicas=replicas)
        self._fence = DirectScript(client, scripts.FENCE_GRANT_USES.text, replicas=replicas)

    def create(self, grant: Grant) -> None:
        """Keep ``grant`` (one transaction in its channel's slot), then list it."""
        record_key = keys.grants(grant.team_id, grant.channel_id)
        calls_key = keys.grant_calls(grant.team_id, grant.channel_id, _index_of(grant))
        # Relative to the grant's own clock (a sandbox's moved clock, say), not to the server's.
        kept_ms = grant.expires_ms - int(grant.granted_at.timestamp() * 1000) + _KEPT_AFTER_MS
        # Listed first: a crash between the two writes leaves a listing entry without a grant (pruned), never a
        # live grant nobody can find to revoke.
        listing = self._client.pipeline(transaction=False)
        listing.zadd(keys.GRANTS_LIVE, {_member(grant): grant.expires_ms})
        for person in _people(grant):
            listing.zadd(keys.grants_of(grant.team_id, person), {_own_member(grant): grant.expires_ms})
        listing.execute()
        transaction = self._client.pipeline(transaction=True)
        transaction.hset(record_key, grant.grant_id, grant.model_dump_json())
        transaction.zadd(calls_key, {grant.grant_id: grant.expires_ms})
        for key in (record_key, calls_key):
            transaction.pexpire(key, kept_ms, gt=True)
            transaction.pexpire(key, kept_ms, nx=True)  # GT leaves a key without an expiry without one
        transaction.execute()

    def use(self, call: Call, *, session_id: str, approval_id: str, clock_offset_ms: int = 0) -> GrantUse | None:
        """The live grant that covers ``call``, asked in ``approval_id`` of ``session_id``, or ``None``.

        Its use is counted once per approval and listed in flight until ``decided`` (a revoke fences it meanwhile).
        One round trip; now is Redis' time plus ``clock_offset_ms`` (``bot.domain.clock.offset_ms``).
        """
        found = self._use(
            keys=scripts.USE_GRANT.key_list(
                grants_key=keys.grants(call.team_id, call.channel_id),
                exact_key=keys.grant_calls(call.team_id, call.channel_id, call.digest),
                fields_key=keys.grant_calls(call.team_id, call.channel_id, call.pattern or call.digest),
                counted_key=keys.grant_used_by(call.team_id, call.channel_id, approval_id),
                in_flight_key=keys.grant_in_flight(call.team_id, call.channel_id),
            ),
            args=scripts.USE_GRANT.arg_list(
                clock_offset_ms=clock_offset_ms,
                rule=call.rule,
                requester=call.requester or "",
                self_allowed="1" if call.self_approval else "0",
                terms=call.terms,
                longest_ms=call.longest_ms,
                field_digests=json.dumps(call.fields or {}) if call.pattern else "{}",
                use_member=f"{session_id}:{approval_id}",
                kept_ms=_listed_in_flight_ms(),
            ),
        )
        if not isinstance(found, list):
            return None
        grant = _grant_of(found[0])
        return GrantUse(grant, int(found[1])) if grant is not None else None

    def decided(self, use: GrantUse, *, session_id: str, approval_id: str) -> None:
        """The use's decision is written (or refused): no revoke needs to fence it any more."""
        grant = use.grant
        member = f"{grant.grant_id}:{session_id}:{approval_id}"
        self._client.zrem(keys.grant_in_flight(grant.team_id, grant.channel_id), member)

    def now(self, *, clock_offset_ms: int = 0) -> datetime:
        """Redis' time plus ``clock_offset_ms``: when a grant is made (its expiry is checked against the same)."""
        seconds, micros = self._client.time()
        return datetime.fromtimestamp(seconds + micros / 1_000_000, UTC) + timedelta(milliseconds=clock_offset_ms)

    def get(self, team_id: str, channel_id: str, grant_id: str) -> Grant | None:
        """One grant, live or expired; ``None`` once revoked (or unreadable)."""
        return _grant_of(self._client.hget(keys.grants(team_id, channel_id), grant_id))

    def held(self, team_id: str, channel_id: str, grant_id: str) -> Grant | None:
        """One grant, live or expired, or being revoked (its revoke not finished); ``None`` once it is gone."""
        record, owed = self._client.hmget(keys.grants(team_id, channel_id), [grant_id, _owed_field(grant_id)])
        return _grant_of(record) or _grant_of(owed)

    def revoke(self, team_id: str, channel_id: str, grant_id: str, *, actor: str = "") -> Revoked | None:
        """End the grant now: the next call it would have covered is asked, and so is every call it was deciding.

        It is listed owed first (``keys.GRANTS_REVOKING``: a worker finishes it if this call dies or fails), then its
        first step (``REVOKE_GRANT``) ends it, then it is audited ``grant_revoked`` (once, as ``actor``'s: whoever
        ended it first), then every use still in flight is fenced in its session's slot (the decide script then
        refuses the grant's decision of it), and only then is it forgotten. A failure (or too few replicas) past the
        first step leaves it owed: ``finished`` is False, and calling this again finishes it. ``None``: neither live
        nor being revoked, or unreadable (its uses listed in flight are fenced all the same).
        """
        grants_key = keys.grants(team_id, channel_id)
        live = self.get(team_id, channel_id, grant_id)
        if live is not None:
            self._owe(live)
        calls_key = keys.grant_calls(team_id, channel_id, _index_of(live)) if live is not None else grants_key
        (ended, text, uses, revoked_by), held = self._revoke.replicated(
            keys=scripts.REVOKE_GRANT.key_list(
                grants_key=grants_key, calls_key=calls_key, in_flight_key=keys.grant_in_flight(team_id, channel_id)
            ),
            args=scripts.REVOKE_GRANT.arg_list(grant_id=grant_id, kept_ms=_listed_in_flight_ms(), actor=actor),
        )
        grant = _grant_of(text) if text else None
        if text:
            self._audit_once(team_id, channel_id, grant_id, grant, actor=as_text(revoked_by))
        fenced = self._fence_uses(grant_id, [as_text(member) for member in uses])  # written even if not held yet
        finished = held and fenced
        if finished:
            forget = self._client.pipeline(transaction=True)
            forgotten = [f"{grant_id}:uses", f"{grant_id}:revoked-by"]
            if grant is not None or not text:  # an unreadable one stays (quarantined, for inspection)
                forgotten.append(_owed_field(grant_id))
            forget.hdel(grants_key, *forgotten)
            if uses:
                forget.zrem(keys.grant_in_flight(team_id, channel_id), *uses)  # fenced: nothing more to do
            forget.execute()
            if grant is not None:
                self.unlist(grant)
            else:
                self._drop_owed(f"{team_id}:{channel_id}:{grant_id}", unreadable=bool(text))
        if grant is None:
            return None
        return Revoked(grant, ended_now=bool(ended), finished=finished)

    def _owe(self, grant: Grant) -> None:
        """List a revoke owed for the workers (``finish_owed``), before its first step, and keep it in the listings.

        Listed until finished, whatever its expiry (a call it was deciding may still be decided by it): found by id,
        shown as being revoked.
        """
        listing = self._client.pipeline(transaction=False)
        listing.zadd(keys.GRANTS_REVOKING, {_member(grant): int(time.time() * 1000) + _OWED_RETRY_MS})
        listing.zadd(keys.GRANTS_LIVE, {_member(grant): _OWED_LISTED})
        for person in _people(grant):
            listing.zadd(keys.grants_of(grant.team_id, person), {_own_member(grant): _OWED_LISTED})
        listing.execute()

    def _audit_once(self, team_id: str, channel_id: str, grant_id: str, grant: Grant | None, *, actor: str) -> None:
        """Audit ``grant_revoked`` unless done already: the event and its mark in one transaction (one slot)."""
        done = keys.grant_revoke_audited(team_id, channel_id, grant_id)
        with self._client.pipeline(transaction=True) as transaction:
            try:
                transaction.watch(done)  # type: ignore[no-untyped-call]
                if transaction.exists(done):
                    return
                transaction.multi()
                tool = grant.tool if grant is not None else None
                self._audit.add(
                    transaction, "grant_revoked", actor=actor, grant=grant_id, tool=tool, channel=channel_id
                )
                transaction.set(done, "1", ex=_AUDITED_KEPT_S)
                transaction.execute()
            except redis.WatchError:
                return  # another try audited it meanwhile

    def _drop_owed(self, member: str, *, unreadable: bool) -> None:
        """Stop trying a revoke finished without a readable grant; one whose grant is unreadable is quarantined."""
        drop = self._client.pipeline(transaction=False)
        drop.zrem(keys.GRANTS_LIVE, member)
        if unreadable:  # listed with no next try: operators find it (its record stays under <grant id>:revoking)
            logger.error("grant=<%s> | revoked, but its record is unreadable: quarantined for inspection", member)
            drop.zadd(keys.GRANTS_REVOKING, {member: _OWED_LISTED})
        else:
            drop.zrem(keys.GRANTS_REVOKING, member)
        drop.execute()

    def finish_owed(self, *, limit: int = 20, budget_s: float = 0.5, now_ms: int | None = None) -> int:
        """Try the owed revokes due, oldest first, for about ``budget_s`` (a worker's, each tick); how many finished.

        Each one tried is put back ``_OWED_RETRY_MS`` later first: one that cannot finish (replicas missing, say)
        waits while the others are tried, and one tick never holds the worker's reminders and expiries long.
        """
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        started, finished = time.monotonic(), 0
        due: list[bytes] = self._client.zrangebyscore(  # type: ignore[assignment]
            keys.GRANTS_REVOKING, "-inf", now_ms, start=0, num=limit
        )
        for member in due:
            if time.monotonic() - started >= budget_s:
                break
            self._client.zadd(keys.GRANTS_REVOKING, {member: now_ms + _OWED_RETRY_MS}, xx=True)
            team_id, channel_id, grant_id = as_text(member).split(":", 2)
            try:
                revoked = self.revoke(team_id, channel_id, grant_id)
            except redis.RedisError as error:
                logger.warning("grant=<%s> | its owed revoke could not be finished (%s)", grant_id, error)
                continue
            finished += revoked is not None and revoked.finished
        return finished

    def _fence_uses(self, grant_id: str, uses: list[str]) -> bool:
        """Fence each use (``<grant id>:<session id>:<approval id>``), a session at a time; whether all are held."""
        by_session: dict[str, list[str]] = {}
        for member in uses:
            session_id, _, approval_id = member.removeprefix(f"{grant_id}:").rpartition(":")
            by_session.setdefault(session_id, []).append(approval_id)
        try:
            for session_id, approval_ids in by_session.items():
                first, *more = (keys.grant_revoked(session_id, approval_id, grant_id) for approval_id in approval_ids)
                _, held = self._fence.replicated(
                    keys=scripts.FENCE_GRANT_USES.key_list(*more, fence_key=first),
                    args=scripts.FENCE_GRANT_USES.arg_list(kept_s=_FENCE_KEPT_S),
                )
                if not held:
                    return False
        except redis.RedisError as error:
            # The session's master failing over, say: the revoke stays owed and is finished when tried again.
            logger.warning("grant=<%s> | its uses in flight could not be fenced (%s): revoke owed", grant_id, error)
            return False
        return True

    def unlist(self, grant: Grant) -> None:
        """Take a grant out of the listings (everyone's, its people's, the owed revokes'), once its record is gone."""
        listing = self._client.pipeline(transaction=False)
        listing.zrem(keys.GRANTS_LIVE, _member(grant))
        listing.zrem(keys.GRANTS_REVOKING, _member(grant))
        for person in _people(grant):
            listing.zrem(keys.grants_of(grant.team_id, person), _own_member(grant))
        listing.execute()

    def list_for(self, grant: Grant) -> bool:
        """List a grant in its people's listings (``migrate --indexes``: grants made before them); whether it is new."""
        listing = self._client.pipeline(transaction=False)
        for person in _people(grant):
            listing.zadd(keys.grants_of(grant.team_id, person), {_own_member(grant): grant.expires_ms})
        return any(listing.execute())

    def list_every_live(self, *, now_ms: int, batch: int = 500) -> int:
        """List every live grant in its people's listings (``migrate --indexes``: grants made before them); how many."""
        listed, offset = 0, 0
        while True:
            page: list[bytes] = self._client.zrangebyscore(  # type: ignore[assignment]
                keys.GRANTS_LIVE, now_ms, "+inf", start=offset, num=batch
            )
            if not page:
                return listed
            offset += len(page)
            for member in page:
                team_id, channel_id, grant_id = as_text(member).split(":", 2)
                grant = self.get(team_id, channel_id, grant_id)
                if grant is not None:
                    listed += self.list_for(grant)

    def live_of(self, team_id: str, user_id: str, *, now_ms: int, limit: int = 50) -> list[ListedGrant]:
        """The ``limit`` live grants of a workspace a person made or that cover their requests, soonest to end first.

        Reads their own listing only (stale entries pruned): what others hold never pushes theirs out.
        """
        listing = keys.grants_of(team_id, user_id)
        reads = self._client.pipeline(transaction=False)
        reads.zremrangebyscore(listing, "-inf", now_ms)
        reads.zrange(listing, 0, limit - 1)
        _, listed = reads.execute()
        places = [(channel_id, grant_id) for channel_id, _, grant_id in (as_text(m).partition(":") for m in listed)]
        records = self._client.pipeline(transaction=False)
        for channel_id, grant_id in places:
            records.hmget(keys.grants(team_id, channel_id), [grant_id, f"{grant_id}:uses", _owed_field(grant_id)])
        found, stale = [], []
        for (channel_id, grant_id), read in zip(places, records.execute() if places else [], strict=True):
            listed = self._listed(team_id, channel_id, grant_id, read)
            if listed is None:
                stale.append(f"{channel_id}:{grant_id}")
                continue
            found.append(listed)
        if stale:
            self._client.zrem(listing, *stale)
        return found

    def _listed(self, team_id: str, channel_id: str, grant_id: str, read: list[Any]) -> ListedGrant | None:
        """A listed grant from its fields (record, uses, owed revoke); ``None``: gone, or its revoke finished now."""
        record, uses, owed = read
        grant = _grant_of(record)
        revoking = grant is None
        if grant is None:
            grant = self._owed_left(team_id, channel_id, grant_id, owed)
        if grant is None:
            return None
        return ListedGrant(grant, int(uses or 0), revoking)

    def _owed_left(self, team_id: str, channel_id: str, grant_id: str, owed: object) -> Grant | None:
        """A listed grant whose revoke is owed: finished now if it can be (``None``), else the grant, still listed."""
        if owed is None:
            return None
        try:
            revoked = self.revoke(team_id, channel_id, grant_id)
        except redis.RedisError as error:
            logger.warning("grant=<%s> | its owed revoke could not be finished (%s): still listed", grant_id, error)
            return _grant_of(owed)
        return None if revoked is None or revoked.finished else revoked.grant

    def place_of(self, grant_id: str) -> tuple[str, str] | None:
        """The workspace and channel of a grant by its id alone (operators: ``python -m bot grants revoke``).

        Found while listed: live, or being revoked (owed until finished, whatever its expiry).
        """
        for listing in (keys.GRANTS_LIVE, keys.GRANTS_REVOKING):
            for member in self._client.zscan_iter(listing, match=f"*:{grant_id}"):
                team_id, channel_id, found_id = as_text(member[0]).split(":", 2)
                if found_id == grant_id:
                    return team_id, channel_id
        return None

    def live(self, *, now_ms: int, limit: int = 200) -> list[ListedGrant]:
        """Live grants, soonest to end first, each with how often it was used (stale index entries pruned)."""
        self._client.zremrangebyscore(keys.GRANTS_LIVE, "-inf", now_ms)
        listed: list[bytes] = self._client.zrange(keys.GRANTS_LIVE, 0, limit - 1)  # type: ignore[assignment]
        members = [as_text(member) for member in listed]
        reads = self._client.pipeline(transaction=False)
        places = []
        for member in members:
            team_id, channel_id, grant_id = member.split(":", 2)
            places.append((team_id, channel_id, grant_id))
            reads.hmget(keys.grants(team_id, channel_id), [grant_id, f"{grant_id}:uses", _owed_field(grant_id)])
        found = []
        for (team_id, channel_id, grant_id), read in zip(places, reads.execute(), strict=True):
            entry = self._listed(team_id, channel_id, grant_id, read)
            if entry is None:
                self._client.zrem(keys.GRANTS_LIVE, f"{team_id}:{channel_id}:{grant_id}")
                continue
            found.append(entry)
        return found


def _index_of(grant: Grant) -> str:
    """Which of its channel's indexes lists ``grant``: its exact call's, or its tool's grants on picked fields."""
    return grant.pattern if grant.fields and grant.pattern else grant.digest


def _owed_field(grant_id: str) -> str:
    """The field of the channel's grants hash that holds a grant being revoked (``REVOKE_GRANT`` writes it)."""
    return f"{grant_id}:revoking"


def _listed_in_flight_ms() -> int:
    """How long a use stays listed in flight: as long as it may decide, and the masters' clocks may be apart."""
    return max(DECIDES_WITHIN_MS, 0) + _CLOCKS_APART_MS


def _member(grant: Grant) -> str:
    return f"{grant.team_id}:{grant.channel_id}:{grant.grant_id}"


def _people(grant: Grant) -> set[str]:
    """Whose listings show the grant: who made it and the requester it covers (the people who may revoke it)."""
    return {person for person in (grant.granted_by, grant.requester) if person}


def _own_member(grant: Grant) -> str:
    return f"{grant.channel_id}:{grant.grant_id}"


def _grant_of(raw: object) -> Grant | None:
    if not isinstance(raw, bytes | str):  # none (or the script's false): no grant
        return None
    try:
        return Grant.model_validate_json(raw)
    except ValidationError:
        logger.warning("an unreadable grant record was ignored: %.200r", raw)
        return None
