"""Settings from the environment (pydantic-settings), with errors a person can act on."""

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

Mode = Literal["http", "socket", "worker"]

_HOW_TO_GET = {
    "SLACK_BOT_TOKEN": "the Bot User OAuth Token (xoxb-...) on your app's 'OAuth & Permissions' page, "
    "after installing the app created from manifest.yml",
    "SLACK_SIGNING_SECRET": "the Signing Secret on your app's 'Basic Information' page",
    "SLACK_APP_TOKEN": "an app-level token (xapp-...) with connections:write, under 'Basic Information' > "
    "'App-Level Tokens' (Socket Mode only)",
}


class Settings(BaseSettings):
    """Everything the bot reads from its environment."""

    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore")

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    redis_url: str | None = None
    agent_factory: str = "agent.demo:build_operations_agent"
    approval_policy: Path | None = None
    port: int = Field(default=3000, ge=1, le=65535)
    retention_days: int = Field(default=30, ge=1)
    """How long decided approvals and idle sessions are kept."""
    audit_max_entries: int = Field(default=1_000_000, ge=1)
    audit_keep_unexported: bool = False
    redis_retry_seconds: float = Field(default=2.0, ge=0, le=60)
    """How long one Redis command retries a lost connection in place (backoff 0.1 s doubling to 1 s) before failing.

    Kept under Slack's 3 s answer deadline: a click waits this long for Redis before it is told to try again."""
    job_claim_seconds: float = Field(default=30.0, gt=0, le=3600)
    """How long a job may go unacknowledged, its worker silent, before another worker takes it over."""
    job_retry_seconds: float = Field(default=1.0, gt=0, le=3600)
    """A worker retries its own failed job after this delay, doubling on each failure (up to half the claim time)."""
    outbox_lease_seconds: float = Field(default=30.0, gt=0, le=3600)
    """How long a dispatcher holds an outbox entry it claimed before another may send it."""


class ConfigError(Exception):
    """Settings are missing or malformed; the message says which and how to fix it."""


def load_settings(mode: Mode) -> Settings:
    """Read the settings that ``mode`` needs.

    Raises:
        ConfigError: One message naming every missing or malformed variable.
    """
    try:
        settings = Settings()
    except ValidationError as error:
        problems = [f"{'.'.join(str(part) for part in item['loc']).upper()}: {item['msg']}" for item in error.errors()]
        raise ConfigError("invalid settings:\n  " + "\n  ".join(problems)) from error
    required = ["SLACK_BOT_TOKEN"]
    if mode == "http":
        required.append("SLACK_SIGNING_SECRET")
    if mode == "socket":
        required.append("SLACK_APP_TOKEN")
    missing = [name for name in required if getattr(settings, name.lower()) is None]
    if missing:
        lines = [f"{name} is not set: it is {_HOW_TO_GET[name]}." for name in missing]
        raise ConfigError("\n".join(lines))
    app_token = settings.slack_app_token
    if mode == "socket" and app_token is not None and not app_token.get_secret_value().startswith("xapp-"):
        raise ConfigError(f"SLACK_APP_TOKEN must start with xapp-: it is {_HOW_TO_GET['SLACK_APP_TOKEN']}.")
    return settings
