"""``python -m bot migrate``: move data written before shards (one server, global queues) to the sharded layout.

What moves, and how: ``bot.store.shard_migration``.
"""

import argparse
import sys

from bot import preflight
from bot.settings import Settings
from bot.store.shard_migration import migrate


def main(argv: list[str]) -> int:
    """Run ``migrate``; print what moved; return 0."""
    parser = argparse.ArgumentParser(
        prog="python -m bot migrate",
        description="Move data written before shards (one server) to the sharded layout, once, with every bot "
        "process stopped (needs REDIS_URL).",
    )
    parser.parse_args(argv)
    settings = Settings()
    client = preflight.operator_redis(settings, unset="REDIS_URL is not set: point it at the bot's Redis")
    moved = migrate(client)
    print(", ".join(f"{count} {what}" for what, count in moved.items()) or "nothing to move", file=sys.stderr)
    return 0
