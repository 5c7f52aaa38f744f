"""The MCP server (``python -m bot mcp``), a client of the bot's HTTP API."""
