"""Where each session's thread lives and who made the latest request in it (``keys.thread``)."""

from dataclasses import asdict, dataclass

import redis

from bot.store import keys
from state.text import as_text


@dataclass(frozen=True)
class ThreadInfo:
    """Where a session's thread lives and who made the latest request in it."""

    team_id: str
    channel_id: str
    thread_ts: str
    requested_by: str


class Threads:
    """Reads and writes the thread record of each session."""

    def __init__(self, client: redis.Redis) -> None:
        """Keep the client."""
        self._client = client

    def get(self, session_id: str) -> ThreadInfo | None:
        """The session's thread, or ``None`` if none is recorded."""
        raw = self._client.hgetall(keys.thread(session_id))
        if not raw:
            return None
        fields = {as_text(key): as_text(value) for key, value in raw.items()}
        return ThreadInfo(fields["team_id"], fields["channel_id"], fields["thread_ts"], fields["requested_by"])

    def remember(self, session_id: str, info: ThreadInfo) -> None:
        """Record the thread (its requester is now ``info.requested_by``)."""
        fields: dict[str, str] = asdict(info)
        self._client.hset(keys.thread(session_id), mapping=fields)  # type: ignore[arg-type]

    @staticmethod
    def keep(pipeline: redis.client.Pipeline, session_id: str, *, expire_after_s: int | None) -> None:
        """Keep the record while approvals wait (``None``), else let it expire (inside the caller's transaction)."""
        if expire_after_s is None:
            pipeline.persist(keys.thread(session_id))
        else:
            pipeline.expire(keys.thread(session_id), expire_after_s)
