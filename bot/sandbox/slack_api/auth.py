"""Which token a Web API call may use: bot tokens for every method, app-level (``xapp-``) tokens for the few that
take them, and the Slack error for anything else."""

from typing import Any, Final

# Methods that take the app-level (xapp-) token and no other; every other method refuses it.
APP_TOKEN_METHODS: Final = frozenset({"apps.connections.open"})


class Tokens:
    """The bot and app-level tokens the fake accepts (not thread-safe: used with the fake's lock held)."""

    def __init__(self, bot_token: str, app_token: str) -> None:
        self.bot = {bot_token}
        self.app = {app_token}

    def add_app(self, token: str) -> None:
        if not token.startswith("xapp-"):
            raise ValueError("app-level tokens start with xapp-")
        self.app.add(token)

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
