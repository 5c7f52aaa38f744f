"""Where Slack meets the bot: the HTTP edge and its guard, the Bolt app and its listeners, Socket Mode,
and delivery of the calls the bot owes Slack.
"""
