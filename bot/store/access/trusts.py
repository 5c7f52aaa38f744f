"""Tools trusted for the rest of a session (``bot.domain.trusts``): recorded, listed per person, revoked.

A session's trusts are one hash in its slot (``keys.trusts``); each person's listing (``keys.trusts_of``) is written
on its own and only follows the records: a trust is live while its own record is.
"""

import logging
from typing import Final

import redis
from pydantic import ValidationError

from bot.domain.trusts import Trust
from bot.store import keys
from state.text import as_text

logger = logging.getLogger(__name__)

LISTED: Final = 50
"""The most trusts a person's listing reads (App Home shows fewer)."""


class TrustStore:
    """Reads and writes the trusts of sessions. Thread-safe (redis-py pools connections)."""

    def __init__(self, client: redis.Redis, *, kept_s: int) -> None:
        """``kept_s``: how long a trust outlives its last use (the session's own records expire alike)."""
        self._client = client
        self._kept_s = kept_s

    def record(self, trust: Trust) -> None:
        """Keep ``trust`` (a tool trusted twice keeps the latest), then list it for both who may end it."""
        key = keys.trusts(trust.session_id)
        with self._client.pipeline(transaction=True) as transaction:
            transaction.hset(key, trust.tool, trust.model_dump_json())
            transaction.expire(key, self._kept_s)
            transaction.execute()
        member = _member(trust.session_id, trust.tool)
        for user in {trust.trusted_by, trust.requester} - {""}:
            listing = keys.trusts_of(trust.team_id, user)
            with self._client.pipeline(transaction=False) as pipeline:
                pipeline.zadd(listing, {member: trust.trusted_at.timestamp()})
                pipeline.expire(listing, self._kept_s)
                pipeline.execute()

    def tools(self, session_id: str, *, requester: str | None = None) -> set[str]:
        """The tools trusted in ``session_id`` now (an unreadable record is not a trust: ``get`` says so too).

        ``requester``: only those trusted on that person's requests (whom the session's next turn serves).
        """
        found: dict[bytes, bytes] = self._client.hgetall(keys.trusts(session_id))  # type: ignore[assignment]
        trusts = [_read(raw, session_id, as_text(tool)) for tool, raw in found.items()]
        return {trust.tool for trust in trusts if trust is not None and requester in (None, trust.requester)}

    def get(self, session_id: str, tool: str) -> Trust | None:
        """One trust, or ``None`` (gone, or unreadable: logged, and treated as gone, so it is never in force)."""
        raw = self._client.hget(keys.trusts(session_id), tool)
        return _read(raw, session_id, tool) if raw is not None else None

    def of_user(self, team_id: str, user_id: str) -> list[Trust]:
        """The live trusts ``user_id`` made or that serve their requests in ``team_id``, newest first."""
        listing = keys.trusts_of(team_id, user_id)
        found: list[bytes] = self._client.zrevrange(listing, 0, LISTED - 1)  # type: ignore[assignment]
        members = [as_text(member) for member in found]
        live: list[Trust] = []
        gone: list[str] = []
        for member in members:
            session_id, _, tool = member.rpartition("/")
            trust = self.get(session_id, tool)
            if trust is None:
                gone.append(member)
            else:
                live.append(trust)
        if gone:  # the listing follows the records: a revoked or expired trust leaves it here
            self._client.zrem(listing, *gone)
        return live

    def revoke(self, session_id: str, tool: str) -> Trust | None:
        """End a trust now (the session's agent asks about the tool again); the trust it was, or ``None``."""
        trust = self.get(session_id, tool)
        if trust is None:
            return None
        if not self._client.hdel(keys.trusts(session_id), tool):
            return None  # ended meanwhile by someone else
        return trust


def _member(session_id: str, tool: str) -> str:
    # A session id never holds "/" (``session_id_for``), a tool name may not hold it either: split from the right.
    return f"{session_id}/{tool}"


def _read(raw: bytes | str, session_id: str, tool: str) -> Trust | None:
    try:
        return Trust.model_validate_json(raw)
    except ValidationError:
        logger.error("session_id=<%s>, tool=<%s> | unreadable trust record, treated as ended", session_id, tool)
        return None
