"""Redis Cluster against one server: sessions per second of the whole flow, both in the same run.

Run: ``python -m bench.cluster [--sessions N] [--people U] [--rounds R]``

The same Procfile layout as ``bench.e2e`` (gunicorn web, ``python -m bot worker`` processes, the
demonstration agent, a loopback Slack Web API, people mentioning the bot and clicking Approve over
signed HTTP), once against one Redis server and once against a 3-master Redis Cluster started from
the same server binary, ``REDIS_URL`` naming one of its nodes (the bot detects the cluster). The bot
uses its default ``REDIS_SHARDS=3`` on both. The two sides alternate, ``--rounds`` times each (after a
warm-up), and the median of each side is compared: ``ratio cluster/single sessions/s`` is the cost (below
1.0x) or gain of cluster mode on this machine, where every master shares the same cores.
"""

import argparse
import statistics
from contextlib import ExitStack

from bench.e2e import BenchSlack, procfile, run_people
from state import RedisServer
from state.redis_cluster import RedisClusterServers


def _rate(port: int, slack: BenchSlack, *, people: int, sessions: int, reaction_s: float) -> float:
    outcome, elapsed = run_people(port, slack, people=people, sessions=sessions, reaction_s=reaction_s)
    if outcome.failures:
        raise RuntimeError(f"{len(outcome.failures)} sessions failed: {outcome.failures[:5]}")
    return outcome.sessions / elapsed


def main() -> None:
    """Measure both sides, alternating; print each side's sessions/s and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300, help="sessions per round")
    parser.add_argument("--people", type=int, default=20, help="people working at once")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per side")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8, help="WORKER_CONCURRENCY of each worker")
    parser.add_argument("--reaction-ms", type=float, default=20, help="how soon after the approval a person clicks")
    args = parser.parse_args()
    reaction_s = args.reaction_ms / 1000
    print(
        f"cluster bench: {args.people} people, {args.sessions} sessions per round, {args.rounds} rounds per side; "
        f"gunicorn {args.web_workers} workers x 8 threads, {args.workers} worker processes "
        f"(WORKER_CONCURRENCY={args.concurrency}), loopback Slack, demonstration agent"
    )
    with ExitStack() as stack:
        server = stack.enter_context(RedisServer())
        cluster = stack.enter_context(RedisClusterServers(masters=3))
        slack = stack.enter_context(BenchSlack())
        sides = {"single": server.url, "cluster": cluster.url}
        ports = {}
        for name, url in sides.items():
            bot = stack.enter_context(
                procfile(
                    url,
                    slack.url,
                    web_workers=args.web_workers,
                    workers=args.workers,
                    concurrency=args.concurrency,
                    model_delay_s=0,
                )
            )
            ports[name] = bot.port
            _rate(bot.port, slack, people=args.people, sessions=args.people * 2, reaction_s=reaction_s)  # warm-up
        rates: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(args.rounds):
            for name in sides:
                rates[name].append(
                    _rate(ports[name], slack, people=args.people, sessions=args.sessions, reaction_s=reaction_s)
                )
    medians = {name: statistics.median(values) for name, values in rates.items()}
    print(f"  one server:           {medians['single']:.1f} sessions/s (rounds: {_list(rates['single'])})")
    print(f"  3-master cluster:     {medians['cluster']:.1f} sessions/s (rounds: {_list(rates['cluster'])})")
    print(f"ratio cluster/single sessions/s: {medians['cluster'] / medians['single']:.2f}x")


def _list(values: list[float]) -> str:
    return ", ".join(f"{value:.1f}" for value in values)


if __name__ == "__main__":
    main()
