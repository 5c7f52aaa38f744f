"""``python -m bot migrate``: move data written before shards (one server, global queues) to the sharded layout.

``--indexes``: build the per-workspace and per-person indexes from the records stored before them instead
(``bot.store.approvals.index_build``; idempotent, safe with the bot running; the worker also does it once at start).

What moves, and how: ``bot.store.shard_migration``.
"""

import argparse
import sys

from bot import preflight
from bot.settings import read_settings
from bot.store.approvals import index_build
from bot.store.shard_migration import migrate
from bot.store.stores import Stores


def main(argv: list[str]) -> int:
    """Run ``migrate`` (or build the indexes); print what moved or was listed; return 0."""
    parser = argparse.ArgumentParser(
        prog="python -m bot migrate",
        description="Move data written before shards (one server) to the sharded layout, once, with every bot "
        "process stopped (needs REDIS_URL).",
    )
    parser.add_argument(
        "--indexes",
        action="store_true",
        help="build the indexes per workspace, channel and person from the stored records instead (idempotent, "
        "safe while the bot runs)",
    )
    args = parser.parse_args(argv)
    settings = read_settings()
    client = preflight.operator_redis(settings, unset="REDIS_URL is not set: point it at the bot's Redis")
    if args.indexes:
        listed = index_build.build(Stores.on(client))
        print(", ".join(f"{count} {what}" for what, count in listed.items()) + " listed", file=sys.stderr)
        return 0
    moved = migrate(client)
    print(", ".join(f"{count} {what}" for what, count in moved.items()) or "nothing to move", file=sys.stderr)
    index_build.build(Stores.on(client))  # the layout before shards had no indexes per workspace or person
    return 0
