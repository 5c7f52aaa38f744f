"""Redis memory per pending and per decided approval, and what the indexes per workspace and person take of it.

Sessions are published through the worker's own path (``RoundPublisher``: the approval, its round, outbox entry,
schedule, audit and indexes), then each approval is decided by the clock (``DecisionService.expire``: the decide
script). ``used_memory`` is read before and after each phase, divided by the approvals; the indexes' share is the
``MEMORY USAGE`` of every shard's index keys. The ratio compares the indexes' bytes with the whole record's.

    .venv/bin/python -m bench.record_memory [--sessions N]
"""

import argparse
import tempfile
from pathlib import Path

import redis
from pydantic import SecretStr

from agent.demo import build_operations_agent
from bot.domain.records import session_id_for
from bot.services import Services
from bot.settings import Settings
from bot.store import keys
from bot.store.approvals.threads import ThreadInfo
from state import RedisServer

POLICY = "rules:\n  - {name: restarts, match: {tools: [restart_service]}, approvers: {users: [U0LEAD]}}\n"
TEAM, CHANNEL, REQUESTER = "T0BENCH", "C0BENCH", "U0REQUESTER"


def _used(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def _index_bytes(client: redis.Redis) -> int:
    """``MEMORY USAGE`` of every index per workspace, channel list and person (none before they were kept)."""
    builders = [getattr(keys, name) for name in ("open_by", "recent_by") if hasattr(keys, name)]
    names = [builder(shard) for builder in builders for shard in keys.shards()]
    if hasattr(keys, "open_channels"):
        names += [keys.open_channels(shard, TEAM) for shard in keys.shards()]
    return sum(int(client.memory_usage(name, samples=0) or 0) for name in names)


def main() -> None:
    """Print the bytes per pending and per decided approval, the indexes' share, and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    args = parser.parse_args()
    with RedisServer() as server, tempfile.TemporaryDirectory() as folder:
        policy = Path(folder) / "policy.yml"
        policy.write_text(POLICY)
        client = redis.Redis.from_url(server.url)
        settings = Settings(
            slack_bot_token=SecretStr("xoxb-bench"),
            slack_signing_secret=SecretStr("bench"),
            slack_api_url="http://127.0.0.1:9/api/",  # nothing is sent to Slack: only Redis is measured
            approval_policy=policy,
        )
        services = Services(settings, redis_client=client, agent_factory=build_operations_agent)
        sessions = []
        for index in range(args.sessions):
            info = ThreadInfo(TEAM, CHANNEL, f"{1700000000 + index}.000100", REQUESTER)
            session_id = session_id_for(info.team_id, info.channel_id, info.thread_ts)
            agent = build_operations_agent(session_id=session_id, store=services.stores.sessions)
            sessions.append((session_id, info, agent, agent("restart checkout")))
        start, start_index = _used(client), _index_bytes(client)
        for session_id, info, agent, result in sessions:
            services.publisher.publish(session_id, info, agent, result)
        pending, pending_index = _used(client) - start, _index_bytes(client) - start_index
        for session_id, *_rest in sessions:
            [approval] = services.stores.approvals.round_approvals(session_id)[1]
            services.decisions.expire(approval, outcome="deny", why="bench", source="bench")
        decided, decided_index = _used(client) - start, _index_bytes(client) - start_index
        client.close()
    count = args.sessions
    print(f"Redis bytes per approval ({count} sessions, used_memory; the sessions' own state not counted):")
    print(f"  pending: {pending / count:,.0f} (of which the indexes: {pending_index / count:,.0f})")
    print(f"  decided: {decided / count:,.0f} (of which the indexes: {decided_index / count:,.0f})")
    print(f"ratio indexes/pending: {pending_index / pending:.3f}x")
    print(f"ratio indexes/decided: {decided_index / decided:.3f}x")


if __name__ == "__main__":
    main()
