"""Who the scenarios are: the loopback Slack's team, the channel the bot is asked in, and the people in it."""

TEAM = "T0TEST"  # the loopback Slack's workspace (FakeSlack's default team)
CHANNEL = "C0OPS"
REQUESTER = "U0REQUESTER"
APPROVER = "U0APPROVER"
SECOND_APPROVER = "U0SECOND"
OUTSIDER = "U0OUTSIDER"
PEOPLE = (REQUESTER, APPROVER, SECOND_APPROVER, OUTSIDER, "U0ONCALLA", "U0ONCALLB", "U0THIRD", "U0LEAD")
CHANNEL_MEMBERS = (*PEOPLE, "U0ONCALL", "U0BOT")
"""Everyone is in the channel (a test that needs an outsider of the channel sets its members)."""
