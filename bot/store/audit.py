r"""The audit trail: every request, vote, decision, claim, reminder, escalation, expiry, refusal and resume.

Appended to a Redis stream (one per shard: an event goes with its session's records); exported as JSON lines or CSV,
every shard merged by time; trimmed by policy.

Trimming keeps the streams bounded (``max_entries`` in all, approximately: each shard keeps its share), on the
server, never reading a stream into the worker. With ``keep_unexported``, nothing newer than the last export is
ever trimmed, whatever the bound: an operator who exports regularly loses nothing.

One damaged entry never stops an export: bytes that are not UTF-8 are shown escaped (``\xff``),
a time that is not a number is taken from the entry's id, and details that do not parse (or nest
too deep) are kept as their raw text.
"""

import csv
import heapq
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain
from typing import Any, Final, Literal, TextIO

import redis

from bot.store import keys
from bot.store.queues.due import FencedWrites
from bot.store.scripts import ScriptRecord
from state.text import as_text, shown

ExportFormat = Literal["jsonl", "csv"]
CSV_COLUMNS = ("id", "at", "event", "actor", "session_id", "details")
_PAGE = 1000
_DETAILS: Final = json.JSONEncoder(default=str, ensure_ascii=False)
"""An event's details as JSON (made once: ``json.dumps`` with options makes an encoder on every call)."""
TRIM_PAGE: Final = 1000
"""With ``keep_unexported``, how many of a shard's oldest exported events one trim reads, at most, to find its cut."""


@dataclass(frozen=True)
class AuditEntry:
    """One event as exported."""

    id: str
    at: str
    event: str
    actor: str
    session_id: str
    details: dict[str, Any]
    shard: int = 0
    """The shard whose stream holds it: a stream id is unique (and ordered) only within its shard's stream."""

    def row(self) -> dict[str, Any]:
        """The entry as a flat record (the JSON line; CSV serializes ``details`` as JSON).

        Its ``id`` names the shard too (``s<shard>-<stream id>``): events of two shards written in the same
        millisecond have the same stream id, and an export's reader may key on ``id``.
        """
        return {
            "id": f"s{self.shard}-{self.id}",
            "at": self.at,
            "event": self.event,
            "actor": self.actor,
            "session_id": self.session_id,
            "details": self.details,
        }


class Audit:
    """Appends, reads, exports and trims audit events."""

    def __init__(self, client: redis.Redis, *, clock: Callable[[], float] = time.time) -> None:
        """Keep the client and clock (seconds)."""
        self._client = client
        self._clock = clock

    def record(self, event: str, *, session_id: str = "", actor: str = "", **details: Any) -> None:
        """Append one event; an unserializable detail is stringified rather than lost."""
        self.add(self._client, event, session_id=session_id, actor=actor, **details)

    def add(
        self,
        target: redis.Redis | redis.client.Pipeline | FencedWrites,
        event: str,
        *,
        session_id: str = "",
        actor: str = "",
        **details: Any,
    ) -> None:
        """Append one event through ``target`` (a pipeline or fenced writes: with the caller's other writes)."""
        # With its session's shard: written in the same atomic step as the session's records.
        stream = keys.audit(keys.shard_of(session_id) if session_id else 0)
        target.xadd(stream, self._fields(event, session_id, actor, details))  # type: ignore[arg-type]

    def script_events(
        self, events: Sequence[str], *, session_id: str = "", actor: str = "", **details: Any
    ) -> tuple[ScriptRecord, ...]:
        """One event of each name in ``events``, the same details, in its own atomic step.

        A script appends the one that happens (``bot.store.scripts``, ``add_audit``).
        """
        fields = self._fields("", session_id, actor, details)
        return tuple(tuple(chain.from_iterable({**fields, "event": event}.items())) for event in events)

    def _fields(self, event: str, session_id: str, actor: str, details: dict[str, Any]) -> dict[str, str]:
        return {
            "event": event,
            "actor": actor,
            "session_id": session_id,
            "at_ms": str(int(self._clock() * 1000)),
            "details": _DETAILS.encode(details),
        }

    def entries(self, *, since: datetime | None = None) -> Iterator[AuditEntry]:
        """Every event from ``since`` on, oldest first: every shard's stream, read page by page, merged by time."""
        streams = [self._shard_entries(shard, since=since) for shard in keys.shards()]
        return heapq.merge(*streams, key=lambda entry: (_stream_id(entry.id), entry.shard))

    def _shard_entries(self, shard: int, *, since: datetime | None) -> Iterator[AuditEntry]:
        # Stream ids count from the epoch: a ``since`` before it keeps everything (a negative id is a Redis error).
        start = f"{max(0, int(since.timestamp() * 1000))}-0" if since is not None else "-"
        while True:
            page: Any = self._client.xrange(keys.audit(shard), min=start, count=_PAGE)
            for entry_id, fields in page:
                yield _entry(as_text(entry_id), {shown(key): shown(value) for key, value in fields.items()}, shard)
            if len(page) < _PAGE:
                return
            start = "(" + as_text(page[-1][0])

    def export(self, out: TextIO, *, since: datetime | None = None, fmt: ExportFormat = "jsonl") -> int:
        """Write events to ``out``; remember the last one exported of each shard (for trimming). Return how many."""
        count = 0
        last: dict[int, str] = {}
        writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS) if fmt == "csv" else None
        if writer is not None:
            writer.writeheader()
        for entry in self.entries(since=since):
            row = entry.row()
            if writer is not None:
                writer.writerow({**row, "details": json.dumps(row["details"], ensure_ascii=False, sort_keys=True)})
            else:
                out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
            last[entry.shard] = entry.id
        out.flush()  # a write that fails (a full disk) must fail before anything counts as exported
        for shard, entry_id in last.items():
            self._mark_exported(shard, entry_id)
        return count

    def trim(self, *, max_entries: int, keep_unexported: bool) -> int:
        """Drop each shard's oldest events beyond its share of ``max_entries`` (never unexported ones if asked).

        Approximate, by the server (``XTRIM ~``): a shard keeps at least ``ceil(max_entries / shards)`` events (events
        go to shards by session, so the shares are about even), plus less than one stream node (100 events at most
        by default): only whole nodes are dropped, at most 10,000 events per shard and call (Redis' default
        ``LIMIT``). Without ``keep_unexported`` nothing is read; with it, at most ``TRIM_PAGE`` of each shard's
        oldest exported events.

        Returns how many were dropped.
        """
        shards = keys.shards()
        keep = -(-max_entries // len(shards))
        if keep_unexported:
            looks = self._client.pipeline(transaction=False)  # one round trip per master
            for shard in shards:
                looks.get(keys.audit_exported(shard))
                looks.xlen(keys.audit(shard))
            answers = looks.execute()
            marks, lengths = answers[::2], answers[1::2]
            return sum(
                self._trim_exported(shard, exported, excess=int(length) - keep)
                for shard, exported, length in zip(shards, marks, lengths, strict=True)
                if exported is not None and int(length) > keep
            )
        trims = self._client.pipeline(transaction=False)  # one round trip per master
        for shard in shards:
            trims.xtrim(keys.audit(shard), maxlen=keep, approximate=True)
        return sum(int(removed) for removed in trims.execute())

    def _trim_exported(self, shard: int, exported: bytes | str, *, excess: int) -> int:
        """Drop up to ``excess`` of ``shard``'s oldest events, none after ``exported`` (its last export).

        ``XTRIM`` takes one bound, a length or an id; this needs the shorter of two prefixes, the events beyond the
        bound and the exported ones. So it reads the oldest exported events, no more than the excess (nor a page),
        and cuts after the last of them: whatever the server drops is exported and beyond the bound.
        """
        stream = keys.audit(shard)
        oldest: Any = self._client.xrange(stream, min="-", max=as_text(exported), count=min(excess, TRIM_PAGE))
        if not oldest:
            return 0
        cut = _next_id(_stream_id(as_text(oldest[-1][0])))
        return int(self._client.xtrim(stream, minid=f"{cut[0]}-{cut[1]}", approximate=True))

    def _mark_exported(self, shard: int, entry_id: str) -> None:
        previous = self._client.get(keys.audit_exported(shard))
        if previous is None or _stream_id(as_text(previous)) < _stream_id(entry_id):
            self._client.set(keys.audit_exported(shard), entry_id)


def read_export(text: str, fmt: ExportFormat) -> list[AuditEntry]:
    """Parse an export back into entries (round trips ``Audit.export``)."""
    if fmt == "jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        rows = [{**row, "details": json.loads(row["details"])} for row in csv.DictReader(text.splitlines())]
    return [_from_row(row) for row in rows]


def _from_row(row: dict[str, Any]) -> AuditEntry:
    shard, _, stream_id = str(row["id"]).removeprefix("s").partition("-")
    return AuditEntry(**{**row, "id": stream_id, "shard": int(shard)})


def _entry(entry_id: str, fields: dict[str, str], shard: int) -> AuditEntry:
    id_ms = int(entry_id.split("-", maxsplit=1)[0])
    stored_ms = fields.get("at_ms", "")
    at_ms = int(stored_ms) if stored_ms.isdigit() and len(stored_ms) <= len(str(id_ms)) else id_ms
    try:
        details = json.loads(fields.get("details") or "{}")
    except (ValueError, RecursionError):
        details = {"raw": fields.get("details")}
    return AuditEntry(
        id=entry_id,
        at=datetime.fromtimestamp(at_ms / 1000, UTC).isoformat(timespec="milliseconds"),
        event=fields.get("event", ""),
        actor=fields.get("actor", ""),
        session_id=fields.get("session_id", ""),
        details=details if isinstance(details, dict) else {"value": details},
        shard=shard,
    )


def _stream_id(text: str) -> tuple[int, int]:
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def _next_id(stream_id: tuple[int, int]) -> tuple[int, int]:
    return stream_id[0], stream_id[1] + 1
