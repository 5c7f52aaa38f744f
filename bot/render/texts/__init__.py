"""Every word the bot says, one module per topic, built from the primitives of ``bot.render.safe_text``."""
