"""What a call to Slack can raise, for the places that must get past a failed call to Slack."""

from http.client import HTTPException
from typing import Final

from slack_sdk.errors import SlackClientError

SLACK_CALL_ERRORS: Final = (SlackClientError, OSError, HTTPException, ValueError)
"""A call to the Web API or a ``response_url``: Slack's refusal, the network, a malformed answer or URL."""
