"""Schedule tick cost: 50 due reminders among 100 pending versus among 100,000 pending.

Run: ``python -m bench.escalation [--due 50] [--small 100] [--large 100000] [--rounds 15]``

Two Redis databases on one real server hold the two schedules; each has the same ``--due``
real approvals whose reminders are due every round, the rest are entries due in a year. Each
round moves the shared clock by the reminder interval and runs one full tick on each side
(claim what is due, load the approvals, post each reminder through the outbox, audit it,
reschedule it), alternating which side goes first. The goal is a ratio near 1: a tick costs in
proportion to what is due, not to what is pending; and it works in batches: the Redis round trips
of each tick are counted on the client's connections (a pipeline is one) and printed.
"""

import json
import statistics
import time
from datetime import UTC, datetime, timedelta

import redis
from slack_sdk import WebClient

from bench.cli import parse_options
from bench.fixtures import synthetic_request
from bench.round_trips import RoundTrips, counting_client
from bot.domain.clock import ManualClock, epoch_ms
from bot.domain.policy.policy import PolicyBook
from bot.domain.records import PolicySummary
from bot.domain.workspaces import OneWorkspace
from bot.flow.decisions import DecisionService
from bot.flow.escalation import Escalator
from bot.store import keys
from bot.store.approvals.approvals import ApprovalStore
from bot.store.queues.schedule import Schedule
from bot.store.stores import Stores
from bot.store.workspaces.directory import Directory
from state import RedisServer

EVERY_S = 900
_CHUNK = 5000


def _escalator(client: redis.Redis, clock: ManualClock) -> Escalator:
    stores = Stores.on(client, clock=clock)
    decisions = DecisionService(
        approvals=stores.approvals,
        audit=stores.audit,
        signatures=stores.signatures,
        directory=Directory(clients=OneWorkspace(WebClient()), redis_client=client),
        clock=clock,
    )
    return Escalator(
        approvals=stores.approvals,
        schedule=stores.schedule,
        outbox=stores.outbox,
        audit=stores.audit,
        decisions=decisions,
        policies=PolicyBook.default(),
        clock=clock,
    )


def _populate(client: redis.Redis, clock: ManualClock, *, due: int, pending: int) -> None:
    client.flushdb()
    approvals = ApprovalStore(client)
    schedule = Schedule(client, clock=clock)
    policy = PolicySummary(name="bench", remind_every_s=EVERY_S)
    transaction = client.pipeline(transaction=True)
    for index in range(due):
        request = synthetic_request(index, policy=policy, created_at=clock())
        approvals.open_round(session_id=request.session_id, version=1, requests=[request], pipeline=transaction)
        schedule.plan(transaction, request)
    transaction.execute()
    far = epoch_ms(clock() + timedelta(days=365))
    for start in range(0, pending - due, _CHUNK):
        pipeline = client.pipeline(transaction=False)
        for index in range(start, min(start + _CHUNK, pending - due)):
            entry_id = f"idle{index:08d}:remind"
            entry = json.dumps(
                {"session_id": "T0:C0:1.1", "approval_id": f"idle{index:08d}", "kind": "remind", "step": 0}
            )
            shard = keys.shard_of("T0:C0:1.1")
            pipeline.hset(keys.schedule_steps(shard), entry_id, entry)
            pipeline.zadd(keys.schedule_due(shard), {entry_id: far})
        pipeline.execute()


def main() -> None:
    """Populate both schedules, tick them alternately, print the medians and the ratio."""
    args = parse_options(__doc__, due=50, small=100, large=100_000, rounds=15)
    clock = ManualClock(datetime(2026, 11, 30, 9, 0, tzinfo=UTC))
    with RedisServer() as server:
        counted = {
            "small": counting_client(server.url.removesuffix("/0") + "/0"),
            "large": counting_client(server.url.removesuffix("/0") + "/1"),
        }
        sides = {name: client for name, (client, _trips) in counted.items()}
        trips: dict[str, RoundTrips] = {name: counter for name, (_client, counter) in counted.items()}
        _populate(sides["small"], clock, due=args.due, pending=args.small)
        _populate(sides["large"], clock, due=args.due, pending=args.large)
        escalators = {name: _escalator(client, clock) for name, client in sides.items()}
        timings: dict[str, list[float]] = {"small": [], "large": []}
        fired: dict[str, list[int]] = {"small": [], "large": []}
        round_trips: dict[str, list[int]] = {"small": [], "large": []}
        for round_index in range(args.rounds + 1):
            clock.advance(EVERY_S)
            order = ["small", "large"] if round_index % 2 == 0 else ["large", "small"]
            for name in order:
                sent_before = trips[name].count
                started = time.perf_counter()
                count = escalators[name].tick(limit=args.due * 2)
                elapsed = time.perf_counter() - started
                if round_index:  # the first round warms caches, connections and scripts up
                    timings[name].append(elapsed)
                    fired[name].append(count)
                    round_trips[name].append(trips[name].count - sent_before)
        pending = {
            name: sum(int(client.zcard(keys.schedule_due(shard))) for shard in keys.shards())
            for name, client in sides.items()
        }

    small, large = statistics.median(timings["small"]), statistics.median(timings["large"])
    print(f"escalation tick: {args.due} due reminders per tick, {args.rounds} rounds, one real Redis")
    print(f"  {pending['small']:>7} pending: median {small * 1000:7.2f} ms per tick (fired {set(fired['small'])})")
    print(f"  {pending['large']:>7} pending: median {large * 1000:7.2f} ms per tick (fired {set(fired['large'])})")
    print(f"ratio large/small: {large / small:.2f}x")
    per_tick = round_trips["small"] + round_trips["large"]
    shown = f"{min(per_tick)}" if min(per_tick) == max(per_tick) else f"{min(per_tick)}-{max(per_tick)}"
    print(f"round trips per tick: {shown} ({args.due} due reminders, counted on the client's connections)")


if __name__ == "__main__":
    main()
