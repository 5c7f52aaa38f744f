"""Scale: what one person's and one workspace's work costs with 50,000 versus 100 open approvals elsewhere.

Run: ``python -m bench.scale [--small 100] [--large 50000] [--rounds 9] [--viewers 5] [--sample 2000]
[--e2e-elsewhere 10000] [--people 40] [--sessions 400]``

Two Redis databases on one real server, one loopback Slack. Each database holds the same own workspace (10 of the
person's requests waiting, 3 of their standing approvals) and ``--small`` or ``--large`` open approvals of another
workspace (with a tenth as many grants there), stored in pipelines through the product's own writes
(``ApprovalStore.open_round``, ``GrantStore.create``). Each round runs, on each side, alternating which goes first:

- ``home``: the person's App Home contents (``HomeQueue.contents_for``);
- ``grants``: the person's grant list (``GrantFlow.live_for``);
- ``uninstall``: the worker carrying out an uninstall of a workspace holding 10 open requests (``carry_out``);
- ``worker``: one new request delivered (its post, and the App Home of ``--viewers`` people who opened it).

Then ``bench.e2e``'s load (the Procfile's processes, ``--people`` at once, ``--sessions`` each run) with
``--e2e-elsewhere`` open approvals of another workspace, first with no App Home viewer, then with ``--viewers``
(each a member of the channel: each may see every request), then none again: sessions/s with viewers against the
mean of the two runs without (goal >= 0.9).

Each figure is the median time of the large side against the small side measured in the same run (the floor):
``ratio`` <= 1.2 means the work does not grow with what others hold. Round trips are counted on the client's
connections (a pipeline is one). Then the Redis memory one pending approval and one decided one take (``--sample``
of each, ``INFO memory`` before and after).
"""

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from pydantic import SecretStr

from bench import e2e
from bench.cli import parse_options
from bench.e2e import BenchSlack
from bench.round_trips import RoundTrips, counting_client
from bench.seeding import open_elsewhere
from bot.domain.clock import ManualClock
from bot.domain.grants import Grant, call_digest
from bot.services import Services
from bot.settings import Settings
from bot.store.queues.outbox import post_approval
from bot.store.queues.owed_uninstalls import OwedUninstall
from bot.store.workspaces.home_viewers import HomeViewers
from loopback_slack import LoopbackSlack
from state import RedisServer

TEAM, CHANNEL = "T0TEST", "C0OPS"  # the loopback Slack's workspace
PERSON, REQUESTER = "U0APPROVER", "U0REQUESTER"
OWN_WAITING = 10
_GOAL = 1.2


@dataclass
class Side:
    """One database: its services over a counting client."""

    services: Services
    trips: RoundTrips
    client: redis.Redis


def _side(url: str, slack: LoopbackSlack, clock: ManualClock, *, elsewhere: int, viewers: list[str]) -> Side:
    client, trips = counting_client(url)
    client.flushdb()
    settings = Settings(
        slack_bot_token=SecretStr(slack.token),
        slack_signing_secret=SecretStr("bench-scale"),
        slack_api_url=slack.url,
        home_refresh_seconds=0,  # every viewer's tab is rebuilt for each request: the worst case
    )
    services = Services(settings, redis_client=client, clock=clock)
    open_elsewhere(client, elsewhere, created_at=clock())
    open_elsewhere(client, OWN_WAITING, created_at=clock(), team_id=TEAM, channel_id=CHANNEL)
    for index in range(elsewhere // 10):
        services.stores.grants.create(_grant(f"other{index}", "T0BENCH", "C0BENCH", clock(), granted_by="U0OTHER"))
    for index in range(3):
        services.stores.grants.create(_grant(f"own{index}", TEAM, CHANNEL, clock(), granted_by=PERSON))
    for viewer in viewers:
        services.stores.home_viewers.add(TEAM, viewer)
    return Side(services, trips, client)


def _grant(grant_id: str, team_id: str, channel_id: str, now: datetime, *, granted_by: str) -> Grant:
    tool_input = {"service": grant_id}
    return Grant(
        grant_id=grant_id,
        team_id=team_id,
        channel_id=channel_id,
        rule="default",
        tool="restart_service",
        tool_input=tool_input,
        digest=call_digest("restart_service", tool_input, client=None),
        terms="bench",
        requester=None,
        granted_by=granted_by,
        granted_at=now,
        expires_at=now + timedelta(days=1),
        approval_id=f"a-{grant_id}",
        granted_ms=int(now.timestamp() * 1000),
    )


def _uninstall(side: Side, round_index: int, clock: ManualClock) -> Callable[[], object]:
    team = f"T0GONE{round_index}"
    open_elsewhere(side.client, OWN_WAITING, created_at=clock(), team_id=team, channel_id="C0GONE")
    return lambda: side.services.uninstalls.carry_out(OwedUninstall("uninstalled", team))


def _new_request(side: Side, round_index: int, clock: ManualClock) -> Callable[[], object]:
    [request] = open_elsewhere(side.client, 1, created_at=clock(), team_id=TEAM, channel_id=f"C0NEW{round_index}")
    side.services.stores.outbox.send_later(post_approval(request.session_id, request.approval_id))
    deliverer = side.services.deliverer

    def deliver() -> int:
        delivered = 0
        while handled := deliverer.deliver_due():
            delivered += handled
        return delivered

    return deliver


def _bytes_per_approval(url: str, clock: ManualClock, slack: LoopbackSlack, sample: int) -> tuple[float, float]:
    side = _side(url, slack, clock, elsewhere=0, viewers=[])
    side.client.flushdb()
    before = int(side.client.info("memory")["used_memory"])
    opened = open_elsewhere(side.client, sample, created_at=clock(), team_id="T0MEM", channel_id="C0MEM")
    pending = int(side.client.info("memory")["used_memory"])
    approvals = side.services.stores.approvals
    for request in opened:
        found = approvals.get(request.session_id, request.approval_id)
        assert found is not None
        side.services.decisions.expire(found, outcome="deny")
    owed = list(side.client.scan_iter("signoff:*outbox*"))  # the messages' updates: Slack's work, not the records'
    if owed:
        side.client.delete(*owed)
    decided = int(side.client.info("memory")["used_memory"])
    return (pending - before) / sample, (decided - before) / sample


class _MembersSlack(BenchSlack):
    """``bench.e2e``'s Slack, whose channel also holds the viewers (each may see every request)."""

    viewers: tuple[str, ...] = ()

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "conversations.members":
            members = [e2e.REQUESTER, e2e.APPROVER, e2e.BOT_USER, *self.viewers]
            return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}
        return super()._answer(method, args)


def _e2e(*, elsewhere: int, viewers: int, people: int, sessions: int) -> None:
    watching = tuple(f"U0WATCH{index}" for index in range(viewers))
    slack = _MembersSlack()
    slack.viewers = watching
    with RedisServer() as server, slack:
        client = redis.Redis.from_url(server.url)
        open_elsewhere(client, elsewhere, created_at=datetime.now(UTC), team_id="T0ELSE", channel_id="C0ELSE")
        home_viewers = HomeViewers(client)
        rates: dict[str, list[float]] = {"none": [], "viewers": []}
        with e2e.procfile(server.url, slack.url, web_workers=2, workers=2, concurrency=8, model_delay_s=0) as bot:
            e2e.run_people(bot.port, slack, people=people, sessions=people * 2, reaction_s=0.02)  # warm-up
            for name in ("none", "viewers", "none"):
                for viewer in watching if name == "viewers" else ():
                    home_viewers.add(e2e.TEAM, viewer)
                outcome, elapsed = e2e.run_people(bot.port, slack, people=people, sessions=sessions, reaction_s=0.02)
                if outcome.failures:
                    raise RuntimeError(f"{len(outcome.failures)} sessions failed: {outcome.failures[:3]}")
                rates[name].append(outcome.sessions / elapsed)
                home_viewers.forget_team(e2e.TEAM)
        published = slack.calls
    without, with_viewers = statistics.fmean(rates["none"]), rates["viewers"][0]
    print(f"e2e: {elsewhere:,} open approvals elsewhere, {people} people at once, {sessions} sessions per run")
    print(f"  no App Home viewer: {without:.1f} sessions/s ({', '.join(f'{rate:.1f}' for rate in rates['none'])})")
    print(f"  {viewers} viewers: {with_viewers:.1f} sessions/s ({published:,} Slack calls in all runs)")
    print(f"ratio e2e sessions/s viewers/none: {with_viewers / without:.2f}x (goal >= 0.9x)")


def main() -> None:
    """Seed both databases, run each step on each alternately, print the medians, round trips and ratios."""
    args = parse_options(
        __doc__,
        small=100,
        large=50_000,
        rounds=9,
        viewers=5,
        sample=2000,
        e2e_elsewhere=10_000,
        people=40,
        sessions=400,
    )
    clock = ManualClock(datetime(2026, 11, 30, 9, 0, tzinfo=UTC))
    viewers = [PERSON, *(f"U0VIEWER{index}" for index in range(args.viewers - 1))]
    channels = {CHANNEL: [REQUESTER, *viewers, "U0BOT"]}
    channels.update({f"C0NEW{index}": [REQUESTER, *viewers, "U0BOT"] for index in range(args.rounds + 1)})
    with (
        RedisServer() as server,
        LoopbackSlack(channels=channels, users={user: {} for user in [REQUESTER, *viewers]}) as slack,
    ):
        base = server.url.removesuffix("/0")
        started = time.monotonic()
        sides = {
            "small": _side(f"{base}/0", slack, clock, elsewhere=args.small, viewers=viewers),
            "large": _side(f"{base}/1", slack, clock, elsewhere=args.large, viewers=viewers),
        }
        print(
            f"seeded {args.small:,} and {args.large:,} open approvals elsewhere in {time.monotonic() - started:.0f} s"
        )
        steps: dict[str, Callable[[Side, int], Callable[[], object]]] = {
            "home": lambda side, _r: lambda: side.services.home_queue.contents_for(PERSON, team_id=TEAM),
            "grants": lambda side, _r: lambda: side.services.grant_flow.live_for(PERSON, team_id=TEAM),
            "uninstall": lambda side, r: _uninstall(side, r, clock),
            "worker": lambda side, r: _new_request(side, r, clock),
        }
        timings = {(step, name): [] for step in steps for name in sides}  # type: ignore[var-annotated]
        trips = {(step, name): [] for step in steps for name in sides}  # type: ignore[var-annotated]
        for round_index in range(args.rounds + 1):
            order = ["small", "large"] if round_index % 2 == 0 else ["large", "small"]
            for step, prepare in steps.items():
                for name in order:
                    side = sides[name]
                    work = prepare(side, round_index)
                    sent = side.trips.count
                    begun = time.perf_counter()
                    work()
                    took = time.perf_counter() - begun
                    if round_index:  # the first round warms connections, scripts and caches up
                        timings[(step, name)].append(took)
                        trips[(step, name)].append(side.trips.count - sent)
        print(f"scale: {args.rounds} rounds, one real Redis, loopback Slack, {args.viewers} App Home viewers")
        for step in steps:
            small = statistics.median(timings[(step, "small")])
            large = statistics.median(timings[(step, "large")])
            shown = {name: int(statistics.median(trips[(step, name)])) for name in sides}
            print(
                f"  {step:<9} {args.small:>6} elsewhere: {small * 1000:8.2f} ms, {shown['small']} round trips; "
                f"{args.large:>6}: {large * 1000:8.2f} ms, {shown['large']} round trips"
            )
            print(f"ratio {step} large/small: {large / small:.2f}x (goal <= {_GOAL}x)")
        pending_b, decided_b = _bytes_per_approval(f"{base}/2", clock, slack, args.sample)
        print(f"  bytes per pending approval: {pending_b:,.0f}; per decided approval: {decided_b:,.0f}")
    _e2e(elsewhere=args.e2e_elsewhere, viewers=args.viewers, people=args.people, sessions=args.sessions)


if __name__ == "__main__":
    main()
