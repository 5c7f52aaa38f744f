"""``python -m bot [serve|socket|worker|sandbox|demo]``: run the bot, its worker, the sandbox or the walk-through.

``python -m bot audit export ...`` writes out the audit trail (see ``bot.cli.audit_export``);
``python -m bot pending`` and ``python -m bot resume <session>`` are for operators (``bot.cli.ops``);
``python -m bot api-key create --name <client>`` issues a key of the HTTP API (``bot.cli.api_keys``);
``python -m bot mcp`` runs the MCP server, a client of that API (``bot.cli.mcp``);
``python -m bot worker-health`` is the worker's liveness probe (``bot.cli.worker_health``);
``python -m bot grants [revoke ID]`` lists or ends standing approvals (``bot.cli.grants``);
``python -m bot policy check FILE --tool NAME --input JSON`` says which rule a call gets (``bot.cli.policy_check``).

With no subcommand: Socket Mode when ``SLACK_APP_TOKEN`` is set, HTTP when only the HTTP
credentials are, and the sandbox (the bot against a local Slack stand-in with a web page) when
no Slack credentials are set at all. ``demo`` is the terminal walk-through.
With ``REDIS_URL`` unset, an embedded Redis server is started and, since no other process can
reach it, the worker runs inside the same process.
"""

import argparse
import ipaddress
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

import redis

from bot import preflight
from bot.cli import api_keys as api_keys_cli
from bot.cli import audit_export as audit_cli
from bot.cli import demo
from bot.cli import grants as grants_cli
from bot.cli import installations as installations_cli
from bot.cli import mcp as mcp_cli
from bot.cli import migrate as migrate_cli
from bot.cli import ops as ops_cli
from bot.cli import policy_check as policy_cli
from bot.cli import worker_health as worker_health_cli
from bot.cli.exits import fail, fail_logging, fail_start
from bot.domain.policy.policy_file import PolicyError
from bot.observe import logs, trace_export
from bot.observe.worker_http import worker_wsgi_app
from bot.render.texts import sandbox_cli
from bot.sandbox import run as sandbox
from bot.services import Services, connect_configured_redis
from bot.settings import ConfigError, Mode, Settings, load_log_settings, load_settings
from bot.slack.app import build_app
from bot.slack.edge.http import close, guarded_wsgi_app, listen, serve
from bot.slack.edge.oauth import INSTALL_PATH
from bot.slack.edge.socket_mode import CheckedSocketModeHandler
from state import RedisServer, RedisServerError

logger = logging.getLogger("bot")


COMMANDS: Final = {
    "serve": "HTTP mode: Slack's requests at /slack/events, the HTTP API under /v1/",
    "socket": "Socket Mode: no public URL needed (SLACK_APP_TOKEN)",
    "worker": "the worker: agent jobs, Slack deliveries, reminders, escalations and expiries",
    "worker-health": "exit 0 when a worker on this host beat recently: its liveness probe (REDIS_URL)",
    "sandbox": "the real bot against a local Slack stand-in with a web page (no Slack needed)",
    "demo": "a walk-through in the terminal: one approval and one denial",
    "pending": "the sessions waiting for approvals, and the approvals quarantined (REDIS_URL)",
    "resume": "queue again the resume of a fully decided session that was given up (REDIS_URL)",
    "audit": "export the audit trail as JSON lines or CSV (REDIS_URL)",
    "migrate": "move data written before shards to the sharded layout, once (REDIS_URL)",
    "api-key": "create, revoke or list the keys of HTTP API clients (REDIS_URL)",
    "grants": "list the standing approvals, or revoke one (REDIS_URL)",
    "installations": "make a key that seals the workspaces' bot tokens, or seal them all with a new one (OAuth)",
    "policy": "check a policy file: which rule a sample call gets, and why",
    "mcp": "the MCP server for Claude Code and other MCP clients (SIGNOFF_API_URL)",
    "help": "this list",
}
"""Every command, with what it does: ``python -m bot help`` (or ``--help``) prints them."""


_OPERATOR_COMMANDS: Final[dict[str, Callable[[list[str]], int]]] = {
    "audit": audit_cli.main,
    "pending": lambda rest: ops_cli.main(["pending", *rest]),
    "resume": lambda rest: ops_cli.main(["resume", *rest]),
    "migrate": migrate_cli.main,
    "api-key": api_keys_cli.main,
    "grants": grants_cli.main,
    "installations": installations_cli.main,
    "worker-health": worker_health_cli.main,
}
"""The commands an operator runs against a running bot's Redis: each parses its own arguments."""


def usage() -> str:
    """What ``python -m bot help`` prints."""
    width = max(len(name) for name in COMMANDS)
    lines = [f"  {name.ljust(width)}  {text}" for name, text in COMMANDS.items()]
    return "\n".join(
        [
            "usage: python -m bot [COMMAND] [--help]",
            "",
            "Signoff: people in Slack approve what AI agents do. With no command: Socket Mode when SLACK_APP_TOKEN",
            "is set, HTTP mode when only the HTTP credentials are, else the sandbox.",
            "",
            "commands:",
            *lines,
            "",
            "python -m bot COMMAND --help says more about each.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run; return the exit status (2 for configuration errors)."""
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] in (["help"], ["--help"], ["-h"]):
        print(usage())
        return 0
    if arguments[:1] == ["mcp"]:
        return mcp_cli.main(arguments[1:])
    if arguments[:1] == ["policy"]:
        return policy_cli.main(arguments[1:])
    operator = _OPERATOR_COMMANDS.get(arguments[0]) if arguments else None
    if operator is not None:
        try:
            return operator(arguments[1:])
        except ConfigError as error:
            return fail(error)
        except redis.RedisError as error:  # past the start-up check: Redis stopped answering, or refused a command
            return fail(f"REDIS_URL: Redis failed the command ({type(error).__name__}: {error}): run it again")
    command_given = arguments[0] if arguments and not arguments[0].startswith("-") else None
    parser = argparse.ArgumentParser(
        prog=f"python -m bot {command_given}" if command_given else "python -m bot",
        description=COMMANDS.get(command_given or "", "Run the bot (see python -m bot help)."),
    )
    parser.add_argument("command", nargs="?", choices=["serve", "socket", "worker", "sandbox", "demo"])
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="sandbox only: the page's port (default: SANDBOX_PORT, else 3000; 0 picks a free one)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="sandbox only: the address the page listens on")
    parser.add_argument(
        "--public",
        action="store_true",
        help="sandbox only: allow a --host other machines can reach (the page lets anyone act as anyone)",
    )
    args = parser.parse_args(argv)
    try:
        log_settings = load_log_settings()
    except ConfigError as error:
        return fail_logging(error)
    logs.configure(log_settings.log_format, log_settings.log_level)
    command = args.command or _default_command()
    if log_settings.traces and command != "demo":
        trace_export.install(command)
    if command == "demo":
        return demo.main()
    if command == "sandbox":
        return _sandbox(args.port, args.host, public=args.public)
    mode: Mode = {"serve": "http", "socket": "socket", "worker": "worker"}[command]  # type: ignore[assignment]
    try:
        settings = load_settings(mode)
        with _redis(settings) as (client, embedded):
            return _run(mode, settings, client, in_process_worker=embedded or mode == "worker")
    except (ConfigError, PolicyError, RedisServerError) as error:
        return fail_start(error, as_json=log_settings.log_format == "json")


def _default_command() -> str:
    if os.environ.get("SLACK_APP_TOKEN"):
        return "socket"
    if any(os.environ.get(name) for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_CLIENT_ID")):
        return "serve"
    return "sandbox"


def _sandbox(port: int | None, host: str, *, public: bool) -> int:
    if not _loopback(host):
        if not public:
            return fail(sandbox_cli.sandbox_host_refused(host))
        print(sandbox_cli.sandbox_public_warning(host), file=sys.stderr, flush=True)
    if port is None:
        port = int(os.environ.get("SANDBOX_PORT") or 3000)
    try:
        return sandbox.run(port=port, host=host, announce=lambda line: print(line, flush=True))
    except (ConfigError, PolicyError, RedisServerError) as error:
        return fail(error)
    except OSError as error:
        return fail(f"cannot serve the sandbox on {host}:{port}: {error} (try --port 0)")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextmanager
def _redis(settings: Settings) -> Iterator[tuple[redis.Redis, bool]]:
    if settings.redis_url:
        client = preflight.answering_redis(settings, url=settings.redis_url)
        preflight.check_shards(client, settings.redis_shards)
        preflight.warn_on_full_coverage(client)
        yield client, False
        return
    with RedisServer() as server:
        logger.info("REDIS_URL unset: embedded Redis at %s (data dir %s)", server.url, server.data_dir)
        yield connect_configured_redis(settings, url=server.url), True


def _run(mode: Mode, settings: Settings, client: redis.Redis, *, in_process_worker: bool) -> int:
    services = Services(settings, redis_client=client)
    preflight.check_slack(settings, socket_mode=mode == "socket")
    worker = services.worker()
    stop = threading.Event()

    def shutdown(signum: int, _frame: object) -> None:
        logger.info("signal %d: stopping", signum)
        worker.stop()
        stop.set()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    if mode == "worker":
        probes = None
        if settings.metrics_port is not None:
            # Bound before the loops start: a port that is taken ends the worker here, naming METRICS_PORT.
            application = worker_wsgi_app(stalled_loops=worker.stalled_loops, state=services.state_metrics)
            probes = listen(application, host=settings.host, port=settings.metrics_port, port_variable="METRICS_PORT")
        try:
            worker.run_forever()
        finally:
            if probes is not None:
                close(probes)
        return 0
    if in_process_worker:
        threading.Thread(target=worker.run_forever, name="worker", daemon=True).start()
    if mode == "socket":
        app = build_app(settings, services)
        assert settings.slack_app_token is not None  # load_settings checked it
        handler = CheckedSocketModeHandler(app, settings.slack_app_token.get_secret_value())
        handler.connect()  # type: ignore[no-untyped-call]
        stop.wait()
        handler.close()  # type: ignore[no-untyped-call]
    else:
        if settings.oauth:
            logger.info("OAuth: each workspace installs the app at <this address>%s", INSTALL_PATH)
        application = guarded_wsgi_app(settings, services)
        # The same application on both ports: it answers each with that port's routes (see probes_apart).
        apart = None
        if settings.metrics_port is not None:
            apart = listen(application, host=settings.host, port=settings.metrics_port, port_variable="METRICS_PORT")
        try:
            serve(application, host=settings.host, port=settings.port, stop=stop)
        finally:
            if apart is not None:
                close(apart)
    worker.stop()
    return 0
