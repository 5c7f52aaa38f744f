"""Redis: every key, script and record the bot keeps, each with one owner. Imports only ``bot.domain``."""
