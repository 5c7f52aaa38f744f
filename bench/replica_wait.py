"""A decision that waits for a replica: a script's reply with ``WAIT`` sent alongside, against without.

Run: ``python -m bench.replica_wait [--calls N] [--rounds R]``

One master and one replica (the same server binary, on loopback), and the bot's ``DirectScript`` (the decide
script's path) running a small write script: with ``replicas=1`` (``REDIS_DECISION_REPLICAS=1``) its reply waits
until the replica acknowledged the write, in the same round trip; with 0 it does not. The two alternate,
``--rounds`` times each; the medians of each side's p50 and p99 are compared (``ratio`` lines: the cost of the
wait on a click's Redis step; the round trips stay one per call, and how many calls the replica did not
acknowledge within 250 ms is printed).
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import redis

from bot.observe import metrics
from bot.store.direct_script import DirectScript
from state import RedisServer

_WRITE = "redis.call('HSET', KEYS[1], 'decision', ARGV[1]) return 1"


def _latencies(script: DirectScript, calls: int) -> list[float]:
    took = []
    for index in range(calls):
        started = time.perf_counter()
        script(keys=[f"bench:replica-wait:{index % 100}"], args=["approve"])
        took.append(time.perf_counter() - started)
    return sorted(took)


def _percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * fraction))]


def main() -> None:
    """Measure both sides, alternating; print each side's p50 and p99 and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per round and side")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds per side")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        master_dir, replica_dir = Path(directory, "master"), Path(directory, "replica")
        master_dir.mkdir()
        replica_dir.mkdir()
        with RedisServer(data_dir=master_dir) as master:
            following = ("--replicaof", "127.0.0.1", str(master.port))
            with RedisServer(data_dir=replica_dir, extra_args=following) as replica:
                replica_client = redis.Redis.from_url(replica.url)
                while replica_client.info("replication").get("master_link_status") != "up":
                    time.sleep(0.05)
                client = redis.Redis.from_url(master.url, socket_timeout=2)
                sides = {"no wait": DirectScript(client, _WRITE), "wait 1": DirectScript(client, _WRITE, replicas=1)}
                for script in sides.values():
                    _latencies(script, args.calls // 4)  # warm-up: connections made, script loaded
                p50: dict[str, list[float]] = {name: [] for name in sides}
                p99: dict[str, list[float]] = {name: [] for name in sides}
                late_before = metrics.UNREPLICATED_WRITES._value.get()
                for _ in range(args.rounds):
                    for name, script in sides.items():
                        took = _latencies(script, args.calls)
                        p50[name].append(_percentile(took, 0.5))
                        p99[name].append(_percentile(took, 0.99))
                late = metrics.UNREPLICATED_WRITES._value.get() - late_before
    for name in sides:
        print(
            f"{name}: p50 {statistics.median(p50[name]) * 1e6:.0f} us, p99 {statistics.median(p99[name]) * 1e6:.0f} us"
        )
    print(f"calls the replica did not acknowledge within 250 ms: {late:.0f} of {args.calls * args.rounds}")
    for label, values in (("p50", p50), ("p99", p99)):
        ratio = statistics.median(values["wait 1"]) / statistics.median(values["no wait"])
        print(f"ratio wait-for-1-replica/no-wait {label} {ratio:.2f}x")


if __name__ == "__main__":
    main()
