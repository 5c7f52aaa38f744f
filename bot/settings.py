"""Settings from the environment (pydantic-settings), with errors a person can act on."""

from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.domain.durations import Seconds
from bot.domain.errors import SetupError
from bot.observe.logs import LogFormat, LogLevel
from bot.store.workspaces.token_seal import key_problem
from state.store import DEFAULT_SHARDS, MAX_SHARDS

Mode = Literal["http", "socket", "worker"]
ClusterMode = Literal["auto", "yes", "no"]

_HOW_TO_GET = {
    "SLACK_BOT_TOKEN": "the Bot User OAuth Token (xoxb-...) on your app's 'OAuth & Permissions' page, "
    "after installing the app created from manifest.yml",
    "SLACK_SIGNING_SECRET": "the Signing Secret on your app's 'Basic Information' page",
    "SLACK_APP_TOKEN": "an app-level token (xapp-...) with connections:write, under 'Basic Information' > "
    "'App-Level Tokens' (Socket Mode only)",
    "REDIS_URL": "the URL of the Redis server every bot process shares, e.g. redis://localhost:6379/0 "
    "(rediss:// for TLS, unix:///path/redis.sock); unset it and serve or socket start an embedded one",
    "SLACK_API_URL": "the base URL of the Slack Web API: leave it unset for https://slack.com/api/",
    "SLACK_CLIENT_ID": "the Client ID on your app's 'Basic Information' page (OAuth: installing in many workspaces)",
    "SLACK_CLIENT_SECRET": "the Client Secret on your app's 'Basic Information' page (OAuth)",
    "INSTALLATION_KEYS": "one or more keys, comma-separated, that seal each workspace's bot token in Redis (OAuth): "
    "python -m bot installations new-key makes one",
}
_REDIS_SCHEMES = ("redis", "rediss", "unix")
BOT_TOKEN_PREFIX = "xoxb-"
"""How every bot token begins (a user token is ``xoxp-``, an app-level token ``xapp-``)."""


def how_to_get(variable: str) -> str:
    """Where a person finds the value of ``variable`` (one of the bot's settings)."""
    return _HOW_TO_GET[variable]


def redis_url_problem(url: str) -> str | None:
    """Why ``url`` is not a Redis URL redis-py can use, or ``None``."""
    try:
        split = urlsplit(url)
        split.port  # noqa: B018 read for its check: a port out of range or not a number raises
    except ValueError:
        # Never urllib's words: they quote a piece of the URL, which a password with a '/' or '[' ends up in.
        return f"REDIS_URL is not a well-formed URL (its host or port cannot be read): it is {how_to_get('REDIS_URL')}."
    if split.scheme not in _REDIS_SCHEMES:
        given = (
            f"{split.scheme}:// given" if split.scheme else "no scheme given"
        )  # never the rest: it may hold a password
        return f"REDIS_URL must start with redis://, rediss:// or unix:// ({given}): it is {how_to_get('REDIS_URL')}."
    if split.scheme != "unix" and not split.hostname:
        return f"REDIS_URL names no host: it is {how_to_get('REDIS_URL')}."
    return None


class LogSettings(BaseSettings):
    """How the process logs and traces: read first, before anything else can log."""

    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore")

    log_format: LogFormat = "text"
    """``text`` (human-readable lines) or ``json`` (one JSON object per line, for a log pipeline)."""
    log_level: LogLevel = "INFO"
    """The lowest level logged."""
    otel_exporter_otlp_endpoint: str | None = None
    """OpenTelemetry's collector (OTLP/HTTP, e.g. ``http://localhost:4318``): set, the bot sends traces there
    (with the ``otel`` extra installed, else a warning; the exporter reads OpenTelemetry's other ``OTEL_*``
    variables)."""
    otel_exporter_otlp_traces_endpoint: str | None = None
    """The same for traces alone, the whole URL (``http://localhost:4318/v1/traces``)."""

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("otel_exporter_otlp_endpoint", "otel_exporter_otlp_traces_endpoint")
    @classmethod
    def _collector_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        split = urlsplit(value)
        if split.scheme not in ("http", "https") or not split.hostname:
            raise ValueError("must be an http:// or https:// URL of an OTLP/HTTP collector")
        return value

    @property
    def traces(self) -> bool:
        """Whether this process sends traces (an OTLP endpoint is set)."""
        return bool(self.otel_exporter_otlp_endpoint or self.otel_exporter_otlp_traces_endpoint)


class PolicyDefaults(BaseSettings):
    """What applies where the policy file says nothing (``python -m bot policy check`` reads these alone)."""

    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore")

    default_expiry: Seconds = Field(default="7d", validate_default=True)
    """How long a request waits, under a rule (or the ``default`` section) that sets no ``expiry``, before it ends as
    expired: the agent is told it expired (a question, that nobody answered), never that a person denied it. A
    duration as the policy file writes one (``90``, ``15m``, ``1h30m``, ``7d``); a rule says ``expiry: never`` to
    wait until decided (docs/policy.md)."""

    @field_validator("default_expiry", mode="before")
    @classmethod
    def _whole_seconds(cls, value: object) -> object:
        if isinstance(value, str) and value.strip() == "never":
            # Waiting forever is each rule's own choice, said where a reader of the policy sees it.
            raise PydanticCustomError(
                "duration", "must be a duration: a rule that waits until decided says 'expiry: never' itself"
            )
        # The environment holds text: "90" is ninety seconds, as 90 is in a policy file.
        return int(value) if isinstance(value, str) and value.strip().isdigit() else value


class Settings(LogSettings, PolicyDefaults):
    """Everything the bot reads from its environment."""

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    slack_client_id: str | None = None
    """With ``SLACK_CLIENT_SECRET`` and no ``SLACK_BOT_TOKEN``: the app installs in many workspaces through OAuth
    (``/slack/install``), each with its own token kept in Redis."""
    slack_client_secret: SecretStr | None = None
    slack_redirect_uri: str | None = None
    """The OAuth redirect URL, when the app lists several (``https://<host>/slack/oauth_redirect``); else Slack
    uses the one the app lists."""
    installation_keys: SecretStr | None = None
    """OAuth: the keys that seal each workspace's bot token in Redis, comma-separated (required with
    ``SLACK_CLIENT_ID``). The first seals, every one opens: to rotate, put a new key first, run
    ``python -m bot installations rotate``, then remove the old one. ``python -m bot installations new-key`` makes
    one."""
    slack_authorize_url: str = "https://slack.com/oauth/v2/authorize"
    """Where ``/slack/install`` sends a person to approve the install (a loopback Slack's, in tests)."""
    redis_url: str | None = None
    redis_cluster: ClusterMode = "auto"
    """Whether ``REDIS_URL`` names a node of a Redis Cluster: ``auto`` asks the server at start."""
    redis_shards: int = Field(default=DEFAULT_SHARDS, ge=1, le=MAX_SHARDS)
    """How many shards sessions and their queues are spread over (the same in every process; sized for a
    3-master cluster). Changing it on existing data needs ``python -m bot migrate``."""
    agent_factory: str = "agent.demo:build_operations_agent"
    """``module:callable`` building the agent of a session, called as ``factory(session_id=..., store=...)``; it
    returns Signoff's ``agent.Agent`` or a Strands agent."""
    approval_policy: Path | None = None
    """Path of the policy file (docs/policy.md), YAML or TOML; unset: anyone in the channel but the requester may
    decide."""
    host: str = "0.0.0.0"
    """The address ``python -m bot serve`` listens on (all interfaces by default: Slack must reach it)."""
    port: int = Field(default=3000, ge=1, le=65535)
    """The port ``python -m bot serve`` listens on (under gunicorn, the Procfile binds ``$PORT`` itself)."""
    retention_days: int = Field(default=30, ge=1)
    """How long decided approvals and idle sessions are kept."""
    audit_max_entries: int = Field(default=1_000_000, ge=1)
    """How many audit events are kept, all shards together, approximately: each shard keeps at least its share
    (this divided by ``REDIS_SHARDS``, rounded up) and under 100 more, as Redis trims whole stream nodes. The worker
    has Redis trim the oldest beyond every minute, reading none of them."""
    audit_keep_unexported: bool = False
    """``true``: trimming never drops events newer than the last ``python -m bot audit export`` (each trim then reads
    at most 1,000 of a shard's oldest exported events, to cut no later than the export)."""
    redis_retry_seconds: float = Field(default=2.0, ge=0, le=60)
    """How long one Redis command retries a lost connection in place (backoff 0.1 s doubling to 1 s) before failing.

    Kept under Slack's 3 s answer deadline: a click waits this long for Redis before it is told to try again."""
    redis_timeout_seconds: float = Field(default=1.0, ge=1.0, le=60)
    """How long one attempt waits for Redis to connect or to reply before it counts as a lost connection.

    A server that stops answering without closing the connection (paused, partitioned, a stuck node) then costs
    this long, not forever; no new attempt starts that could end past ``REDIS_RETRY_SECONDS``. At least 1 s: the
    worker's blocking reads wait ``BLOCKING_WAIT_MAX_S`` (0.5 s) at most."""
    redis_decision_replicas: int = Field(default=0, ge=0, le=16)
    """How many replicas must hold a decision before the person is told it is recorded (``WAIT``, sent with the
    decide script in the same round trip; at most 250 ms, then counted in ``signoff_unreplicated_writes_total``).
    0: not waited for, and a failover right after a click can lose that click's decision (docs/redis.md)."""
    job_claim_seconds: float = Field(default=30.0, gt=0, le=3600)
    """How long a job may go unacknowledged, its worker silent, before another worker takes it over."""
    job_retry_seconds: float = Field(default=1.0, gt=0, le=3600)
    """A worker retries its own failed job after this delay, doubling on each failure (up to half the claim time)."""
    worker_concurrency: int = Field(default=8, ge=1, le=256)
    """How many jobs one worker process runs at once (threads; never two of one session): a model call waits, so
    one process can overlap the waits of many sessions."""
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    """Where ``python -m bot worker`` serves ``/metrics`` and ``/healthz`` (unset: it serves nothing), and the web
    process (gunicorn, ``serve``) ``/metrics`` and ``/readyz``, then no longer on ``PORT`` (404 there; ``/healthz``
    stays on ``PORT``). On ``HOST``. Unset, the web process serves them on ``PORT`` beside Slack's requests."""
    worker_heartbeat_seconds: float = Field(default=5.0, gt=0, le=300)
    """How often a worker records that it is alive; one silent for three beats counts as dead (worker-health)."""
    api_max_waits: int = Field(default=4, ge=1, le=1024)
    """How many long-polls (``GET /v1/approvals/{id}?wait=``) one web process holds at once; more are refused with
    429 and ``Retry-After``. Each holds a thread that Slack's requests share: keep it under gunicorn's ``--threads``
    (the Procfile's 8 leave 4 for Slack)."""
    outbox_lease_seconds: float = Field(default=30.0, gt=0, le=3600)
    """How long a dispatcher holds an outbox entry it claimed before another may send it."""
    outbox_concurrency: int = Field(default=8, ge=1, le=64)
    """How many conversations the dispatcher delivers to at once (each in order, over its own kept-alive connection)."""
    home_refresh_seconds: float = Field(default=2.0, ge=0, le=60)
    """At most one App Home rebuild per person in this window: changes meanwhile are shown together at its end
    (0: each change rebuilds at once)."""
    home_viewer_hours: float = Field(default=24.0, gt=0, le=24 * 90)
    """How long a person who stopped opening App Home still has their tab rebuilt when a request they can see
    changes; opening it again starts over."""

    @property
    def oauth(self) -> bool:
        """Whether the app serves many workspaces, each installed through OAuth (else one, with ``SLACK_BOT_TOKEN``)."""
        return self.slack_client_id is not None and self.slack_bot_token is None


class ConfigError(SetupError):
    """Settings are missing or malformed; the message says which and how to fix it."""


def _invalid(error: ValidationError) -> ConfigError:
    problems = [f"{'.'.join(str(part) for part in item['loc']).upper()}: {item['msg']}" for item in error.errors()]
    return ConfigError("invalid settings:\n  " + "\n  ".join(problems))


_Read = TypeVar("_Read", bound=BaseSettings)


def _read(model: type[_Read]) -> _Read:
    """``model`` read from the environment; a malformed variable raises ``ConfigError`` naming it."""
    try:
        return model()
    except ValidationError as error:
        raise _invalid(error) from error


def load_log_settings() -> LogSettings:
    """Read ``LOG_FORMAT`` and ``LOG_LEVEL``.

    Raises:
        ConfigError: Naming the variable that is malformed.
    """
    return _read(LogSettings)


def load_policy_defaults() -> PolicyDefaults:
    """Read ``DEFAULT_EXPIRY``.

    Raises:
        ConfigError: Naming the variable that is malformed.
    """
    return _read(PolicyDefaults)


def read_settings() -> Settings:
    """Every setting as the environment gives it (an operator command's; ``load_settings`` checks a mode's needs too).

    Raises:
        ConfigError: Naming every variable that is malformed.
    """
    return _read(Settings)


def _token_problems(settings: Settings, mode: Mode) -> list[str]:
    """What is wrong with the choice between one workspace (a bot token) and many (OAuth)."""
    if settings.slack_bot_token is not None and settings.slack_client_id is not None:
        return [
            "SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: one workspace uses the bot token, many install "
            "through OAuth with the client id and secret. Unset one."
        ]
    if settings.oauth and mode == "socket":
        return [
            "SLACK_CLIENT_ID is set without SLACK_BOT_TOKEN, but Socket Mode serves the one workspace of a bot token: "
            "set SLACK_BOT_TOKEN (and unset SLACK_CLIENT_ID), or serve over HTTP (python -m bot serve) to install "
            "in many workspaces through OAuth."
        ]
    return []


def _required_problem(settings: Settings, name: str) -> str | None:
    """Why the required variable ``name`` is unusable (unset, blank, not a bot token), or ``None``."""
    value: SecretStr | str | None = getattr(settings, name.lower())
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    if text is None:
        return f"{name} is not set: it is {_HOW_TO_GET[name]}."
    if not text.strip():
        return f"{name} is blank: it is {_HOW_TO_GET[name]}."
    if name == "SLACK_BOT_TOKEN" and not text.startswith(BOT_TOKEN_PREFIX):
        # Never the value: it is a secret, and a user or app token pasted here would be one too.
        return f"SLACK_BOT_TOKEN must start with {BOT_TOKEN_PREFIX}: it is {_HOW_TO_GET[name]}."
    return None


def load_settings(mode: Mode) -> Settings:
    """Read the settings that ``mode`` needs.

    Raises:
        ConfigError: One message naming every missing or malformed variable.
    """
    settings = _read(Settings)
    lines = _token_problems(settings, mode)
    oauth_required = ["SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "INSTALLATION_KEYS"]
    required = oauth_required if settings.oauth else ["SLACK_BOT_TOKEN"]
    if mode == "http":
        required.append("SLACK_SIGNING_SECRET")
    if mode == "socket":
        required.append("SLACK_APP_TOKEN")
    lines += [problem for name in required if (problem := _required_problem(settings, name))]
    if settings.redis_url is not None and (problem := redis_url_problem(settings.redis_url)):
        lines.append(problem)
    keys = settings.installation_keys
    if keys is not None and keys.get_secret_value().strip() and (problem := key_problem(keys.get_secret_value())):
        lines.append(f"{problem}.")
    if urlsplit(settings.slack_api_url).scheme not in ("http", "https"):
        lines.append(f"SLACK_API_URL must be an http(s) URL: it is {_HOW_TO_GET['SLACK_API_URL']}.")
    if mode == "http" and settings.metrics_port == settings.port:
        lines.append(f"METRICS_PORT must differ from PORT ({settings.port}): it takes /metrics and /readyz off it.")
    if settings.oauth and urlsplit(settings.slack_authorize_url).scheme not in ("http", "https"):
        lines.append("SLACK_AUTHORIZE_URL must be an http(s) URL: leave it unset for Slack's.")
    if lines:
        raise ConfigError("\n".join(lines))
    app_token = settings.slack_app_token
    if mode == "socket" and app_token is not None and not app_token.get_secret_value().startswith("xapp-"):
        raise ConfigError(f"SLACK_APP_TOKEN must start with xapp-: it is {_HOW_TO_GET['SLACK_APP_TOKEN']}.")
    return settings
