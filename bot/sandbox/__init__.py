"""``python -m bot sandbox``: a local Slack stand-in with its web page, which the tests use as their fake Slack too."""
