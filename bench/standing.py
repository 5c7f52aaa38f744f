"""What a call a rule or a standing approval lets through costs before it runs, in Redis round trips.

The demonstration agent asks to restart a service; the worker publishes the interrupt (``RoundPublisher``).
Three policies, one run each of many sessions: ``ask`` (people decide: the floor, what asking costs at all),
``allow`` (the rule decides in the publishing transaction), ``grant`` (a standing approval covers the
call: one script in the channel's slot, then the same transaction) and ``picked`` (the same, the grant pinning
picked fields only). The figure is the round trips the worker
sends from the agent's interrupt until the resume job is queued, counted on the wire; the goal is at most one
round trip more than the floor.

    .venv/bin/python -m bench.standing [--sessions N]
"""

import argparse
import statistics
import tempfile
from datetime import timedelta
from pathlib import Path

from pydantic import SecretStr

from agent.demo import build_operations_agent
from bench.round_trips import counting_client
from bot.domain.clock import epoch_ms, system_clock
from bot.domain.grants import Grant, call_digest, deciders_digest, field_digests, new_grant_id, pattern_key
from bot.domain.records import session_id_for
from bot.services import Services
from bot.settings import Settings
from bot.store.approvals.threads import ThreadInfo
from state import RedisServer

POLICIES = {
    "ask": "rules:\n  - {name: restarts, match: {tools: [restart_service]}}\n",
    "allow": "rules:\n  - {name: restarts, match: {tools: [restart_service], when: 'args.service != \"\"'}, "
    "tier: allow}\n",
    "grant": "rules:\n  - {name: restarts, match: {tools: [restart_service]}, grants: {durations: [1h]}}\n",
}
POLICIES["picked"] = POLICIES["grant"]  # a grant on picked fields: found through its tool's index, same script
TEAM, CHANNEL, REQUESTER = "T0BENCH", "C0BENCH", "U0REQUESTER"


def _round_trips(kind: str, sessions: int, url: str, folder: Path) -> list[int]:
    policy = folder / f"{kind}.yml"
    policy.write_text(POLICIES[kind])
    client, trips = counting_client(url)
    client.flushdb()
    settings = Settings(
        slack_bot_token=SecretStr("xoxb-bench"),
        slack_signing_secret=SecretStr("bench"),
        slack_api_url="http://127.0.0.1:9/api/",  # nothing is sent to Slack: only the worker's Redis side is measured
        approval_policy=policy,
    )
    services = Services(settings, redis_client=client, agent_factory=build_operations_agent)
    if kind in ("grant", "picked"):
        now = system_clock()
        asked = {"service": "checkout"}
        picked = {
            "fields": field_digests("restart_service", asked, client=None),
            "pattern": pattern_key("restart_service", client=None),
        }
        restarts = services.policies.for_call(tool="restart_service", interrupt_name="approval").summary()
        services.stores.grants.create(
            Grant(
                grant_id=new_grant_id(),
                team_id=TEAM,
                channel_id=CHANNEL,
                rule="restarts",
                tool="restart_service",
                tool_input={"service": "checkout"},
                digest=call_digest("restart_service", {"service": "checkout"}, client=None),
                terms=deciders_digest(restarts),
                requester=REQUESTER,
                granted_by="U0APPROVER",
                granted_at=now,
                expires_at=now + timedelta(hours=1),
                granted_ms=epoch_ms(now),
                approval_id="bench",
                **(picked if kind == "picked" else {}),
            )
        )
    counted = []
    for index in range(sessions):
        info = ThreadInfo(TEAM, CHANNEL, f"{1700000000 + index}.000100", REQUESTER)
        session_id = session_id_for(info.team_id, info.channel_id, info.thread_ts)
        agent = build_operations_agent(session_id=session_id, store=services.stores.sessions)
        result = agent("restart checkout")  # the interrupt, saved with the session (not counted: the same for all)
        assert result.stop_reason == "interrupt"
        before = trips.count
        services.publisher.publish(session_id, info, agent, result)
        counted.append(trips.count - before)
        decided = services.stores.approvals.round_approvals(session_id)[1][0].decision
        assert (decided is not None) == (kind != "ask"), (kind, decided)
    if kind in ("grant", "picked"):
        uses = services.stores.grants.live(now_ms=epoch_ms(system_clock()))[0][1]
        assert uses == sessions, uses
    client.close()
    return counted


def main() -> None:
    """Print each policy's round trips and their ratio to the floor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    args = parser.parse_args()
    with RedisServer() as server, tempfile.TemporaryDirectory() as folder:
        medians = {
            kind: statistics.median(_round_trips(kind, args.sessions, server.url, Path(folder))) for kind in POLICIES
        }
    floor = medians["ask"]
    print(f"round trips from the interrupt to its outcome recorded (median of {args.sessions} sessions):")
    for kind, median in medians.items():
        print(f"  {kind}: {median:g}")
    for kind in ("allow", "grant", "picked"):
        print(
            f"ratio {kind}/ask round trips: {medians[kind] / floor:.2f}x (+{medians[kind] - floor:g}; goal: at most +1)"
        )


if __name__ == "__main__":
    main()
