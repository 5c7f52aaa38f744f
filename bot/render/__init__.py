"""Pure rendering: Block Kit payloads and every user-facing text. Imports only ``bot.domain``."""
