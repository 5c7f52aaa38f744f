"""``python -m bot worker-health [--all] [--max-age SECONDS]``: the worker's liveness probe (needs ``REDIS_URL``).

Exit 0 when a worker on this host (its consumer name starts with the host name) beat recently, 1 when none did
(dead, or one of its loops hung: a hung worker stops beating), 2 when Redis cannot be asked. ``--all``: any
worker of the deployment. A platform runs it as an exec probe in the worker's container.
"""

import argparse
import math
import socket

from bot import preflight
from bot.cli.exits import fail
from bot.settings import read_settings
from bot.store.queues.worker_heartbeats import WorkerHeartbeats


def _seconds(text: str) -> float:
    """``--max-age``: a finite number of seconds above 0 (NaN or infinity cannot bound a heartbeat's age)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"--max-age must be a number of seconds above 0, got {text!r}")
    return seconds


def main(argv: list[str]) -> int:
    """Print the live workers; return 0 if there is one (on this host unless ``--all``), else 1."""
    parser = argparse.ArgumentParser(
        prog="python -m bot worker-health", description="Exit 0 when a worker beat recently (a liveness probe)."
    )
    parser.add_argument("--all", action="store_true", help="any worker of the deployment, not only this host's")
    parser.add_argument(
        "--max-age",
        type=_seconds,
        default=None,
        help="seconds since a worker's last beat (default: three times WORKER_HEARTBEAT_SECONDS)",
    )
    args = parser.parse_args(argv)
    settings = read_settings()
    client = preflight.operator_redis(settings, unset="REDIS_URL is not set: point it at the workers' Redis")
    heartbeats = WorkerHeartbeats(client, beat_every_s=settings.worker_heartbeat_seconds)
    live = heartbeats.live(max_age_s=args.max_age)
    host = socket.gethostname()
    if not args.all:
        live = {name: age for name, age in live.items() if name.startswith(f"{host}-")}
    for name, age in sorted(live.items()):
        print(f"{name}\tlast beat {age:.1f} s ago")
    if not live:
        where = "in the deployment" if args.all else f"on {host}"
        return fail(f"no live worker {where}", status=1)
    return 0
