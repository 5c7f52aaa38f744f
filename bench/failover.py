"""Cluster failover under traffic: one master paused while people click, its replica promoted; what each shard saw.

Run: ``python -m bench.failover [--sessions N] [--people U] [--pause-s S]``

The Procfile's processes (gunicorn web, ``python -m bot worker`` processes, the demonstration agent, a loopback
Slack) against a 3-master Redis Cluster with a replica each, people mentioning the bot and clicking Approve over
signed HTTP as in ``bench.e2e``. First a run with every master healthy (the floor); then the same run during which
the master holding shard 0 is paused (SIGSTOP: it answers nothing, as a partition looks) for ``--pause-s`` seconds,
long enough for the cluster to promote its replica. Printed: for the sessions of the healthy shards and of the
paused one, click -> reply p50 and max, and when the paused shard's sessions ran again after the pause began. A
click that meets the paused master is told "not recorded, try again" (the bench does not click again: that session
does not end, and is counted by shard). The ``ratio`` lines compare the healthy shards' worst click -> reply during
the failover to their worst in the floor run (a shard's trouble should stay that shard's), and sessions per second
of both runs (the second counts the sessions that did not end, each waiting the bench's reply timeout).
"""

import argparse
import statistics
import threading
import time
from collections import Counter
from contextlib import ExitStack

from bench.e2e import CHANNEL, TEAM, BenchSlack, procfile, run_people
from bot.services import connect_redis
from bot.store import keys
from state.redis_cluster import RedisClusterServers
from state.store import use_shards


def _shard_of(thread_ts: str) -> int:
    return keys.shard_of(f"{TEAM}:{CHANNEL}:{thread_ts}")


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")


def main() -> None:
    """Run the floor, then the failover; print what each shard's sessions saw, and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300, help="sessions per run")
    parser.add_argument("--people", type=int, default=12, help="people working at once")
    parser.add_argument("--pause-s", type=float, default=8.0, help="how long the master is paused")
    parser.add_argument("--reaction-ms", type=float, default=20, help="how soon after the approval a person clicks")
    args = parser.parse_args()
    use_shards(3)  # the bot's default REDIS_SHARDS: the bench names each session's shard as the bot does
    reaction_s = args.reaction_ms / 1000
    with ExitStack() as stack:
        cluster = stack.enter_context(RedisClusterServers(masters=3, replicas=1))
        slack = stack.enter_context(BenchSlack())
        bot = stack.enter_context(
            procfile(cluster.url, slack.url, web_workers=2, workers=2, concurrency=8, model_delay_s=0.0)
        )
        run_people(bot.port, slack, people=args.people, sessions=30, reaction_s=reaction_s)  # warm-up
        floor, floor_s = run_people(bot.port, slack, people=args.people, sessions=args.sessions, reaction_s=reaction_s)

        client = connect_redis(cluster.url, retry_s=2.0)
        port = int(client.get_node_from_key(keys.jobs(0)).port)  # type: ignore[attr-defined]
        [master] = [node for node in cluster.nodes if node.port == port]
        paused_at: list[float] = []

        def pause() -> None:
            time.sleep(1.0)
            paused_at.append(time.perf_counter())
            master.pause()
            time.sleep(args.pause_s)
            master.resume()

        pausing = threading.Thread(target=pause)
        pausing.start()
        during, during_s = run_people(
            bot.port, slack, people=args.people, sessions=args.sessions, reaction_s=reaction_s
        )
        pausing.join()
        client.close()

    healthy_floor = [took for thread_ts, _at, took in floor.finished if _shard_of(thread_ts) != 0]
    healthy = [took for thread_ts, _at, took in during.finished if _shard_of(thread_ts) != 0]
    troubled = [(at, took) for thread_ts, at, took in during.finished if _shard_of(thread_ts) == 0]
    print(
        f"failover bench: 3 masters + 3 replicas, {args.people} people, {args.sessions} sessions per run, "
        f"shard 0's master paused {args.pause_s:.0f} s"
    )
    print(f"floor: {len(floor.finished) / floor_s:.1f} sessions/s, failures {len(floor.failures)}")
    print(f"failover run: {len(during.finished) / during_s:.1f} sessions/s, failures {len(during.failures)}")
    for name, values in (("healthy shards, floor", healthy_floor), ("healthy shards, failover", healthy)):
        print(f"{name}: click -> reply p50 {_percentile(values, 0.5) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms")
    if troubled and paused_at:
        after = [at - paused_at[0] for at, _took in troubled if at > paused_at[0]]
        print(
            f"paused shard: {len(troubled)} sessions, click -> reply max {max(took for _at, took in troubled):.1f} s; "
            f"first reply after the pause began: {min(after):.1f} s"
            if after
            else "paused shard: no reply after it"
        )
    # A session whose click met the paused master was told "not recorded, try again" (the bench clicks once): it
    # counts against its own shard only if the failover keeps the promise.
    by_shard = Counter(_shard_of(failure.split(":", 1)[0].removeprefix("thread ")) for failure in during.failures)
    print(f"sessions that did not end (a click not recorded: the person would click again), by shard: {dict(by_shard)}")
    print(f"ratio healthy-shards-max-click-to-reply failover/floor {max(healthy) / max(healthy_floor):.2f}x")
    print(f"ratio sessions/s failover/floor {(len(during.finished) / during_s) / (len(floor.finished) / floor_s):.2f}x")
    median_ratio = statistics.median(healthy) / statistics.median(healthy_floor)
    print(f"ratio median healthy click-to-reply failover/floor {median_ratio:.2f}x")


if __name__ == "__main__":
    main()
