"""Audit trim cost at a large stream: Redis trims on the server, against one XLEN round trip.

Run: ``python -m bench.audit_trim [--entries 200000] [--added 1000] [--rounds 7]``

One real Redis holds the audit streams (every shard) at ``--entries`` events in all, the bound. Each round
adds ``--added`` events (a busy minute) and times one trim as the worker runs it every minute, without
``keep_unexported`` and with it (every event exported first, so the trim may cut up to the bound), and one
``XLEN`` round trip: the floor. The ratios say how many round trips' worth a trim costs, whatever the streams'
length. For scale, the trim before this one read the newest ``--entries`` events into the worker to find one
cut across shards: that read alone is timed once, with the memory it took.
"""

import statistics
import time
import tracemalloc
from typing import Any

import redis

from bench.cli import parse_options
from bot.store import keys
from bot.store.audit import Audit
from state import RedisServer

_CHUNK = 5000


def _add(client: redis.Redis, audit: Audit, start: int, count: int) -> None:
    """``count`` events of as many sessions (spread over the shards, as sessions are), pipelined in chunks."""
    for first in range(start, start + count, _CHUNK):
        writes = client.pipeline(transaction=False)
        for index in range(first, min(first + _CHUNK, start + count)):
            audit.add(writes, "decision", session_id=f"T0:C0:{index}.1", actor="U0BENCH", decision="approve")
        writes.execute()


def _export_all(client: redis.Redis) -> None:
    """Mark every event exported, as ``audit export`` would (without writing them out)."""
    for shard in keys.shards():
        newest: Any = client.xrevrange(keys.audit(shard), count=1)
        client.set(keys.audit_exported(shard), newest[0][0])


def _read_newest(client: redis.Redis, count: int) -> int:
    """What the trim before this one read, every minute, to find its cut: the newest ``count`` of every shard."""
    newest: list[tuple[bytes, int]] = []
    for shard in keys.shards():
        page: Any = client.xrevrange(keys.audit(shard), count=count)
        newest.extend((entry_id, shard) for entry_id, _fields in page)
    return len(sorted(newest, reverse=True)[:count])


def _timed(action: Any) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    """Fill the streams to the bound, then time trims against XLEN; print the medians and the ratios."""
    args = parse_options(__doc__, entries=200_000, added=1000, rounds=7)
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        audit = Audit(client)
        filled = _timed(lambda: _add(client, audit, 0, args.entries))
        written = args.entries
        timings: dict[str, list[float]] = {"xlen": [], "trim": [], "trim keeping unexported": []}
        dropped: dict[str, list[int]] = {"trim": [], "trim keeping unexported": []}
        for round_index in range(args.rounds + 1):
            for name, keep_unexported in (("trim", False), ("trim keeping unexported", True)):
                _add(client, audit, written, args.added)
                written += args.added
                if keep_unexported:
                    _export_all(client)
                started = time.perf_counter()
                removed = audit.trim(max_entries=args.entries, keep_unexported=keep_unexported)
                elapsed = time.perf_counter() - started
                xlen = _timed(lambda: client.xlen(keys.audit(0)))
                if round_index:  # the first round warms the connection up
                    timings[name].append(elapsed)
                    dropped[name].append(removed)
                    timings["xlen"].append(xlen)
        length = sum(int(client.xlen(keys.audit(shard))) for shard in keys.shards())
        old_read = _timed(lambda: _read_newest(client, args.entries))
        tracemalloc.start()
        _read_newest(client, args.entries)
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

    floor = statistics.median(timings["xlen"])
    print(f"audit trim: {args.entries} events kept over {len(keys.shards())} shards (filled in {filled:.1f} s),")
    print(f"  {args.added} added before each trim, {args.rounds} rounds, one real Redis; {length} events left")
    print(f"  one XLEN round trip: median {floor * 1000:7.3f} ms")
    for name in ("trim", "trim keeping unexported"):
        median = statistics.median(timings[name])
        print(f"  {name:<24}: median {median * 1000:7.3f} ms, dropped {min(dropped[name])}-{max(dropped[name])}")
        print(f"ratio {name}/XLEN: {median / floor:.1f}x")
    print(f"the read the trim before this one did: {old_read * 1000:.0f} ms, {peak / 2**20:.0f} MiB in the worker")
    print(f"ratio that read/trim: {old_read / statistics.median(timings['trim']):.0f}x")


if __name__ == "__main__":
    main()
