"""``python -m bot grants [list]`` and ``python -m bot grants revoke GRANT_ID``: standing approvals, for operators.

Needs ``REDIS_URL``.

``list`` prints each live grant: its id, what exact call it covers, where, for whom, who made it, until when and
how often it was used (and finishes the revokes owed for those listed; one that cannot be finished yet is listed,
marked revoking). ``revoke`` ends one now (the next call it
covered is asked), audited as the operator's, or finishes its revoke (one that could not fence the calls it was
deciding: the command says so, exits 3, and is run again).
"""

import argparse
import json
import time

from bot import preflight
from bot.cli.exits import fail
from bot.domain.grants import ListedGrant
from bot.settings import read_settings
from bot.store.access.grants import GrantStore


def main(argv: list[str]) -> int:
    """Run one ``grants`` command; 0 done, 1 no such live grant, 2 for a configuration error, 3 revoke not finished."""
    parser = argparse.ArgumentParser(prog="python -m bot grants", description="Standing approvals.")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("list", help="the live standing approvals (the default)")
    revoke = commands.add_parser("revoke", help="end one now: the next call it covered is asked")
    revoke.add_argument("grant_id", help="its id, as list prints it")
    args = parser.parse_args(argv)
    settings = read_settings()
    client = preflight.operator_redis(settings, unset="REDIS_URL is not set: point it at the bot's Redis")
    grants = GrantStore(client, replicas=settings.redis_decision_replicas)
    if args.command == "revoke":
        place = grants.place_of(args.grant_id)  # listed until revoked in full: a revoke tried again finishes it
        revoked = None
        if place is not None:
            revoked = grants.revoke(*place, args.grant_id, actor="operator:cli")  # audited once
        if revoked is None:
            listing = "python -m bot grants lists them"
            return fail(f"no live standing approval {args.grant_id!r} ({listing})", status=1)
        ended = revoked.grant
        if not revoked.finished:
            problem = "it covers no new call, but a call it was deciding could not be stopped yet: run this again"
            return fail(f"not revoked yet: {ended.grant_id} ({problem})", status=3)
        print(f"revoked: {ended.grant_id} ({ended.tool} in {ended.channel_id})")
        return 0
    live = grants.live(now_ms=int(time.time() * 1000))
    for listed in live:
        print(listing_line(listed))
    if not live:
        print("no live standing approvals")
    return 0


def listing_line(listed: ListedGrant) -> str:
    """One grant as ``list`` prints it (tab-separated), marked when its revoke is not finished."""
    grant = listed.grant
    arguments = json.dumps(grant.tool_input, ensure_ascii=True, sort_keys=True)[:200]
    who = grant.requester or "anyone"
    line = (
        f"{grant.grant_id}\t{grant.tool} {arguments}\tin {grant.team_id}/{grant.channel_id} for {who}"
        f"\tby {grant.granted_by}\tuntil {grant.expires_at.isoformat(timespec='seconds')}\tused {listed.uses}"
    )
    return line + ("\trevoking… (not finished: revoke it again, or the bot finishes it)" if listed.revoking else "")
