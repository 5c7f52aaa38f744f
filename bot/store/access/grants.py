"""Standing approvals in Redis: made, used, listed and revoked (``bot.domain.grants`` says what one covers).

A channel's grants live in one slot (``keys.grants``): using one (``USE_GRANT``, one round trip) and revoking it
are atomic with each other, so a revoke stops the very next call. A use decides its call later, in the session's
slot (``RoundPublisher``): until then it is listed in flight (``keys.grant_in_flight``), and a revoke fences each
use listed there in its session's slot (``keys.grant_revoked``) before it returns, so the decide script refuses
the grant's decision of any call whose decision was not written by then. The listing's index (``keys.GRANTS_LIVE``) is
written on its own and only follows the grants: a grant is live while its own record is. So does each person's
listing (``keys.grants_of``: the grants they made or that cover their requests), which App Home reads: a page of their
own, whatever others hold.
"""

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

import redis
from pydantic import ValidationError

from bot.domain.grants import Grant
from bot.store import keys, scripts
from state.text import as_text

logger = logging.getLogger(__name__)

_KEPT_AFTER_MS: Final = 86_400_000  # a channel's records outlive its last grant by a day (then expire)
_FENCE_KEPT_S: Final = 86_400  # as long as a use stays listed in flight: far longer than a use may still decide
DECIDES_WITHIN_MS: Final = 600_000
"""A use decides its call only this soon after it (Redis' time): a publish stalled longer leaves the call to people,
so a revoke's fences (kept a day) outlive every decision they must stop."""


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

    def __init__(self, client: redis.Redis) -> None:
        """Register the script; nothing is sent yet."""
        self._client = client
        self._use = client.register_script(scripts.USE_GRANT.text)

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

    def revoke(self, team_id: str, channel_id: str, grant_id: str) -> Grant | None:
        """End the grant now: the next call it would have covered is asked, and so is every call it was deciding.

        Every use still in flight is fenced in its session's slot before this returns: the decide script then refuses
        the grant's decision of it. Calling it again for a grant already gone fences again (a revoke that died half
        way). The grant it was, or ``None``.
        """
        record_key = keys.grants(team_id, channel_id)
        in_flight_key = keys.grant_in_flight(team_id, channel_id)
        grant = _grant_of(self._client.hget(record_key, grant_id))
        transaction = self._client.pipeline(transaction=True)
        transaction.hdel(record_key, grant_id, f"{grant_id}:uses")  # from here on no call is covered
        if grant is not None:
            transaction.zrem(keys.grant_calls(team_id, channel_id, _index_of(grant)), grant_id)
        # Read with the delete: a use is either listed here, or comes after it and finds no grant.
        transaction.zrangebylex(in_flight_key, f"[{grant_id}:", f"({grant_id};")
        deleted, *_, in_flight = transaction.execute()
        if in_flight:
            fences = self._client.pipeline(transaction=False)
            for member in in_flight:
                session_id, _, approval_id = as_text(member).removeprefix(f"{grant_id}:").rpartition(":")
                fences.set(keys.grant_revoked(session_id, approval_id, grant_id), "1", ex=_FENCE_KEPT_S)
            fences.execute()
            self._client.zrem(in_flight_key, *in_flight)  # fenced: a revoke tried again has nothing more to do
        if grant is None:
            return None
        self.unlist(grant)
        return grant if deleted else None

    def unlist(self, grant: Grant) -> None:
        """Take a grant out of the listings (the everyone's and its people's), once its record is gone."""
        listing = self._client.pipeline(transaction=False)
        listing.zrem(keys.GRANTS_LIVE, _member(grant))
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

    def live_of(self, team_id: str, user_id: str, *, now_ms: int, limit: int = 50) -> list[tuple[Grant, int]]:
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
            records.hmget(keys.grants(team_id, channel_id), [grant_id, f"{grant_id}:uses"])
        found, stale = [], []
        for (channel_id, grant_id), (record, uses) in zip(places, records.execute() if places else [], strict=True):
            grant = _grant_of(record)
            if grant is None:
                stale.append(f"{channel_id}:{grant_id}")
                continue
            found.append((grant, int(uses or 0)))
        if stale:
            self._client.zrem(listing, *stale)
        return found

    def place_of(self, grant_id: str) -> tuple[str, str] | None:
        """The workspace and channel of a grant by its id alone (operators: ``python -m bot grants revoke``).

        Found while listed: live, or revoked but not yet unlisted (a revoke that died half way).
        """
        for member in self._client.zscan_iter(keys.GRANTS_LIVE, match=f"*:{grant_id}"):
            team_id, channel_id, found_id = as_text(member[0]).split(":", 2)
            if found_id == grant_id:
                return team_id, channel_id
        return None

    def live(self, *, now_ms: int, limit: int = 200) -> list[tuple[Grant, int]]:
        """Live grants, soonest to end first, each with how often it was used (stale index entries pruned)."""
        self._client.zremrangebyscore(keys.GRANTS_LIVE, "-inf", now_ms)
        listed: list[bytes] = self._client.zrange(keys.GRANTS_LIVE, 0, limit - 1)  # type: ignore[assignment]
        members = [as_text(member) for member in listed]
        reads = self._client.pipeline(transaction=False)
        places = []
        for member in members:
            team_id, channel_id, grant_id = member.split(":", 2)
            places.append((team_id, channel_id, grant_id))
            reads.hmget(keys.grants(team_id, channel_id), [grant_id, f"{grant_id}:uses"])
        found = []
        for (team_id, channel_id, grant_id), (record, uses) in zip(places, reads.execute(), strict=True):
            grant = _grant_of(record)
            if grant is None:
                self._client.zrem(keys.GRANTS_LIVE, f"{team_id}:{channel_id}:{grant_id}")
                continue
            found.append((grant, int(uses or 0)))
        return found


def _index_of(grant: Grant) -> str:
    """Which of its channel's indexes lists ``grant``: its exact call's, or its tool's grants on picked fields."""
    return grant.pattern if grant.fields and grant.pattern else grant.digest


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
