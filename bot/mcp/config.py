"""The MCP server's settings, from the environment: where the Signoff API is, which key, where to ask."""

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class McpSettings(BaseSettings):
    """Read from ``SIGNOFF_API_URL`` (required), ``_API_KEY``, ``_CHANNEL``, ``_REQUESTER`` and ``_TIMEOUT``.

    ``SIGNOFF_API_KEY`` is required over stdio; over HTTP each client may send its own.
    """

    model_config = SettingsConfigDict(env_prefix="SIGNOFF_", case_sensitive=False, extra="ignore")

    api_url: str
    """The bot's web process, e.g. https://signoff.example.com (the API is under /v1/)."""
    api_key: SecretStr | None = None
    """A key from ``python -m bot api-key create`` (over HTTP, a caller's own Bearer key wins)."""
    channel: str | None = None
    """The Slack channel requests go to, unless a tool call names one (else the policy's route)."""
    requester: str | None = None
    """The Slack user the agent acts for (they cannot approve their own requests)."""
    timeout: int = Field(default=3600, ge=1, le=7 * 86_400)
    """How long a tool waits for a decision or an answer (seconds) before it withdraws the request."""

    @field_validator("api_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL, the bot's web process (e.g. https://signoff.example.com)")
        return value


def load_mcp_settings() -> McpSettings:
    """The settings, or ``ValueError`` with one line per missing or malformed variable."""
    try:
        return McpSettings()  # read from the environment
    except ValidationError as error:
        lines = [
            f"SIGNOFF_{'.'.join(str(part) for part in item['loc']).upper()}: {item['msg']}" for item in error.errors()
        ]
        raise ValueError("\n".join(lines)) from None
