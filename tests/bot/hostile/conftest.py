"""Fixtures for the hostile-input tests (the bot's own)."""

from tests.bot.conftest import bot

__all__ = ["bot"]
