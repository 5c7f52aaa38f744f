"""``python -m bot sandbox``: a local Slack stand-in with its web page, on the loopback Slack Web API."""
