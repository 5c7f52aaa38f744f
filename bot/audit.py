"""The audit trail: every request, decision, refusal and resume, appended to a Redis stream."""

import json
import time
from collections.abc import Callable
from typing import Any, Final

import redis

from bot import keys

_MAX_ENTRIES: Final = 1_000_000


class Audit:
    """Appends audit events; never raises for an unserializable detail (it is stringified)."""

    def __init__(self, client: redis.Redis, *, clock: Callable[[], float] = time.time) -> None:
        """Keep the client and clock."""
        self._client = client
        self._clock = clock

    def record(self, event: str, *, session_id: str = "", actor: str = "", **details: Any) -> None:
        """Append one event: what happened, who did it, to which session, and the details."""
        fields = self.fields(event, session_id=session_id, actor=actor, **details)
        self._client.xadd(keys.AUDIT, fields, maxlen=_MAX_ENTRIES, approximate=True)  # type: ignore[arg-type]

    def fields(self, event: str, *, session_id: str = "", actor: str = "", **details: Any) -> dict[str, str]:
        """The stream fields of one event (for writers that append it inside their own script)."""
        return {
            "event": event,
            "actor": actor,
            "session_id": session_id,
            "at_ms": str(int(self._clock() * 1000)),
            "details": json.dumps(details, default=str, ensure_ascii=False),
        }

    def entries(self) -> list[dict[str, str]]:
        """Every event, oldest first (for tests and exports)."""
        raw: Any = self._client.xrange(keys.AUDIT)
        return [{_text(key): _text(value) for key, value in fields.items()} for _entry_id, fields in raw]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
