"""``python -m bot installations new-key|rotate``: the keys that seal each workspace's bot token in Redis (OAuth).

``new-key`` prints a fresh key for ``INSTALLATION_KEYS``. ``rotate`` seals every installation with the first key
of ``INSTALLATION_KEYS`` (needs ``REDIS_URL``): put the new key first, keep the old one after it, run ``rotate``,
then remove the old key. Records written before sealing existed are sealed by it too.
"""

import argparse

from bot import preflight
from bot.cli.exits import fail
from bot.services import installation_seal
from bot.settings import read_settings
from bot.store.workspaces.installations import Installations
from bot.store.workspaces.token_seal import new_key


def main(argv: list[str]) -> int:
    """Run one ``installations`` command; return the exit status (1 when a record no key opens was left, 2 invalid)."""
    parser = argparse.ArgumentParser(
        prog="python -m bot installations", description="The keys that seal the installations' bot tokens."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("new-key", help="print a fresh key for INSTALLATION_KEYS")
    commands.add_parser("rotate", help="seal every installation with the first key of INSTALLATION_KEYS")
    args = parser.parse_args(argv)
    if args.command == "new-key":
        print(new_key())
        return 0
    settings = read_settings()
    seal = installation_seal(settings)
    if seal is None:
        return fail("INSTALLATION_KEYS is not set: the keys to seal with (python -m bot installations new-key)")
    client = preflight.operator_redis(settings, unset="REDIS_URL is not set: point it at the bot's Redis")
    done = Installations(client, seal=seal).reseal_all()
    print(f"sealed with the first key: {done.resealed}; already: {done.current}; no key opens: {done.unopenable}")
    if done.unopenable:
        return fail(
            f"{done.unopenable} installation(s) sealed with a key INSTALLATION_KEYS lacks were left as they are "
            "(the log names them): add that key after the first and run rotate again, or let those workspaces "
            "reinstall",
            status=1,
        )
    return 0
