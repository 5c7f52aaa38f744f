"""``python -m bot api-key create|revoke|list``: the keys of HTTP API (and MCP) clients (needs ``REDIS_URL``).

``create --name ci-runner`` prints the key and the client's callback secret once: only the key's
SHA-256 is stored. ``revoke --name ci-runner`` deletes it; requests it made stay, audited under its name.
An app installed in several workspaces (OAuth) asks each client's requests in one: ``create --team T0123``.
"""

import argparse
from datetime import UTC, datetime

from bot import preflight
from bot.cli.exits import fail
from bot.domain.api_requests import client_name_problem
from bot.domain.slack_ids import team_id_problem
from bot.settings import read_settings
from bot.store.access.api_keys import ApiKeys


def main(argv: list[str]) -> int:
    """Run one ``api-key`` command; return the exit status (1 when the name is taken or unknown, 2 when invalid)."""
    parser = argparse.ArgumentParser(prog="python -m bot api-key", description="API keys of the HTTP API.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("create", "issue a key for a new client"), ("revoke", "delete a client's key")):
        command = commands.add_parser(name, help=text)
        command.add_argument("--name", required=True, help="the client's name, audited with each request")
        if name == "create":
            command.add_argument("--team", default="", help="the workspace (team id) its requests are asked in")
    commands.add_parser("list", help="the clients that hold a key")
    args = parser.parse_args(argv)
    if args.command != "list" and (problem := client_name_problem(args.name)):
        return fail(f"--name: {problem}")
    if args.command == "create" and args.team and (problem := team_id_problem(args.team)):
        return fail(f"--team: {problem}")
    settings = read_settings()
    keys = ApiKeys(preflight.operator_redis(settings, unset="REDIS_URL is not set: point it at the bot's Redis"))
    if args.command == "create":
        issued = keys.create(args.name, team_id=args.team)
        if issued is None:
            return fail(f"a client named {args.name!r} exists already (revoke it first)", status=1)
        print(f"client: {issued.client.name}" + (f" (workspace {args.team})" if args.team else ""))
        print(f"api key: {issued.key}")
        print(f"callback secret: {issued.client.callback_secret}")
        print("Keep both now: the key is not shown again (only its digest is stored).")
        return 0
    if args.command == "revoke":
        if not keys.revoke(args.name):
            return fail(f"no client named {args.name!r}", status=1)
        print(f"revoked: {args.name}")
        return 0
    for client in keys.all():
        created = datetime.fromtimestamp(client.created_at_ms / 1000, UTC).isoformat(timespec="seconds")
        team = f"\tworkspace {client.team_id}" if client.team_id else ""
        print(f"{client.name}\tcreated {created}{team}")
    return 0
