"""Where Slack meets the bot.

The HTTP edge and its guard, the Bolt app and its listeners, Socket Mode, and delivery of the calls the bot owes Slack.
"""
