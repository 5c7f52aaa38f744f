"""Where Slack meets the bot: the HTTP edge, the Bolt app and its listeners, Socket Mode, delivery to Slack.

The edge has its guard; delivery makes the calls the bot owes Slack.
"""
