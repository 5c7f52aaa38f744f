"""``python -m bot mcp [--http [--host H] [--port N]]``: the MCP server, a client of the bot's HTTP API.

Over stdio by default (an MCP client such as Claude Code starts it); ``--http`` serves streamable
HTTP at ``http://H:N/mcp``. Configured by ``SIGNOFF_API_URL``, ``SIGNOFF_API_KEY`` and optionally
``SIGNOFF_CHANNEL``, ``SIGNOFF_REQUESTER``, ``SIGNOFF_TIMEOUT`` (see ``bot.mcp.config``).
"""

import argparse

from bot.cli.exits import fail


def main(argv: list[str]) -> int:
    """Run the MCP server until its client goes (stdio) or a signal (HTTP); 2 for configuration errors."""
    parser = argparse.ArgumentParser(prog="python -m bot mcp", description="The Signoff MCP server.")
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="--http: the address to listen on")
    parser.add_argument("--port", type=int, default=8765, help="--http: the port (path /mcp)")
    args = parser.parse_args(argv)
    try:
        # Imported here: the ``mcp`` package is an extra, and only this command needs it.
        from bot.mcp.config import load_mcp_settings  # noqa: PLC0415
        from bot.mcp.server import build_server  # noqa: PLC0415

        settings = load_mcp_settings()
    except ImportError as error:
        return fail(f"the MCP server needs the mcp extra: pip install 'signoff[mcp]' ({error})")
    except ValueError as error:
        return fail(error)
    server = build_server(settings)
    if args.http:
        server.run("streamable-http", host=args.host, port=args.port)
    else:
        server.run("stdio")
    return 0
