"""Which token a Web API call may use, and the Slack error for one it may not.

Bot tokens for every method, app-level (``xapp-``) tokens for the few that take them.
"""

import base64
import binascii
from typing import Any, Final

# Methods that take the app-level (xapp-) token and no other; every other method refuses it.
APP_TOKEN_METHODS: Final = frozenset({"apps.connections.open"})


class Tokens:
    """The bot and app-level tokens the fake accepts (not thread-safe: used with the fake's lock held)."""

    def __init__(self, bot_token: str, app_token: str) -> None:
        """Accept ``bot_token`` for every method and ``app_token`` for the app-level ones."""
        self.bot = {bot_token}
        self.app = {app_token}

    def refusal(self, method: str, headers: dict[str, str], args: dict[str, Any]) -> str | None:
        """The Slack error for the call's token (``Authorization: Bearer`` or a ``token`` field), or ``None``."""
        authorization = headers.get("authorization", "")
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer":
                return "invalid_auth"
        else:
            token = str(args.get("token", ""))
            if not token:
                return "not_authed"
        token = token.strip()
        app_level = method in APP_TOKEN_METHODS
        if token in (self.bot if app_level else self.app):
            return "not_allowed_token_type"  # a bot token for an app-level method, or the other way round
        return None if token in (self.app if app_level else self.bot) else "invalid_auth"


def bearer_token(headers: dict[str, str], args: dict[str, Any]) -> str:
    """The token a call presents (``Authorization: Bearer`` or a ``token`` field), "" if none."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else str(args.get("token", "")).strip()


def client_credentials(headers: dict[str, str], args: dict[str, Any]) -> tuple[str, str] | None:
    """The app's client id and secret an OAuth call presents (HTTP Basic, or ``client_id`` / ``client_secret``)."""
    scheme, _, encoded = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "basic":
        try:
            client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return client_id, secret
    if "client_id" in args:
        return str(args["client_id"]), str(args.get("client_secret", ""))
    return None
