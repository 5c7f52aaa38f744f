"""``python -m bot audit export --since ... --format jsonl|csv [--output FILE]``: the audit trail, written out.

Reads ``REDIS_URL`` (required: an embedded Redis would be empty). The export remembers the last
entry it wrote, so trimming with ``AUDIT_KEEP_UNEXPORTED`` never drops anything newer.
"""

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from bot import preflight
from bot.cli.exits import fail
from bot.settings import read_settings
from bot.store.audit import Audit


def _since(text: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--since must be an ISO date or time, e.g. 2026-11-30 or 2026-11-30T08:00Z, got {text!r}"
        ) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def main(argv: list[str]) -> int:
    """Run ``audit export``; return the exit status (2 for usage or configuration errors)."""
    parser = argparse.ArgumentParser(prog="python -m bot audit", description="Export the audit trail.")
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write audit events as JSON lines or CSV")
    export.add_argument("--since", type=_since, help="only events at or after this time (ISO 8601; UTC if no zone)")
    export.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    export.add_argument("--output", type=Path, help="file to write (default: standard output)")
    args = parser.parse_args(argv)
    settings = read_settings()
    unset = "REDIS_URL is not set: the audit trail lives in the bot's Redis; point REDIS_URL at it"
    audit = Audit(preflight.operator_redis(settings, unset=unset))
    if args.output is None:
        try:
            count = audit.export(sys.stdout, since=args.since, fmt=args.format)
        except OSError as error:  # a closed pipe (`| head`): what was read was not all written, so none is marked
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # or the exit's flush fails again
            return fail(f"cannot write standard output: {error.strerror}; nothing was marked exported", status=1)
    else:
        try:
            out = args.output.open("w", encoding="utf-8", newline="")
        except OSError as error:
            return fail(f"--output: cannot open {args.output}: {error.strerror}")
        try:
            with out:
                count = audit.export(out, since=args.since, fmt=args.format)
        except OSError as error:
            problem = f"--output: cannot write {args.output}: {error.strerror}; nothing was marked exported"
            return fail(problem, status=1)
    print(f"exported {count} audit events", file=sys.stderr)
    return 0
