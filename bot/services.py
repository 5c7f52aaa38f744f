"""The composition root: every collaborator of the bot, built once from the settings; and the Redis connection."""

import functools
import importlib
import time
from collections.abc import Callable, Iterable
from typing import Any, cast

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.retry import Retry
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler

from bot.api.app import PREFIX as API_PREFIX
from bot.api.app import api_wsgi_app
from bot.api.wait_slots import WaitSlots
from bot.domain.clock import Clock, system_clock
from bot.domain.policy.policy import PolicyBook
from bot.domain.policy.policy_file import load_policy
from bot.domain.workspaces import OneWorkspace, SlackClients
from bot.flow.access import Modals
from bot.flow.api_requests import ApiOutcomes, ApiRequests, AskProblem
from bot.flow.attending import Attending
from bot.flow.decisions import DecisionService
from bot.flow.edits import EditFlow
from bot.flow.escalation import Escalator
from bot.flow.grants import GrantFlow
from bot.flow.home_queue import HomeQueue
from bot.flow.job_retries import JobRetries
from bot.flow.publish import RoundPublisher
from bot.flow.runner import AgentFactory, SessionRunner
from bot.flow.uninstalls import Uninstalls
from bot.observe import metrics
from bot.observe.state_collector import StateCollector
from bot.settings import ClusterMode, ConfigError, Settings, how_to_get
from bot.slack.outbound.delivery import Deliverer
from bot.slack.outbound.installed_clients import InstalledClients
from bot.slack.outbound.metered_client import MeteredWebClient
from bot.store import failed_attempts
from bot.store.approvals import index_build
from bot.store.approvals.pending_gauges import PendingGauges
from bot.store.cluster_client import BotRedisCluster
from bot.store.queues.worker_heartbeats import WorkerHeartbeats
from bot.store.stores import Stores
from bot.store.workspaces.directory import Directory
from bot.store.workspaces.token_seal import TokenSeal, key_problem
from bot.worker import Worker
from state.store import use_shards


class Services:
    """Everything listeners and the worker use, wired once from the settings: the composition root."""

    def __init__(
        self,
        settings: Settings,
        *,
        redis_client: redis.Redis,
        agent_factory: AgentFactory | None = None,
        clock: Clock = system_clock,
    ) -> None:
        """Build every collaborator on ``redis_client`` (an agent factory from ``AGENT_FACTORY`` unless given).

        Raises:
            ConfigError: The policy file or the agent factory is unusable.
        """
        use_shards(settings.redis_shards)
        self.settings = settings
        self.clock = clock
        retention_s = settings.retention_days * 86_400
        self.stores = stores = Stores.on(
            redis_client,
            retention_s=retention_s,
            clock=clock,
            seal=installation_seal(settings),
            decision_replicas=settings.redis_decision_replicas,
            home_viewer_s=settings.home_viewer_hours * 3600,
        )
        token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
        self.slack: WebClient = MeteredWebClient(
            token=token, base_url=settings.slack_api_url, retry_handlers=[ConnectionErrorRetryHandler()]
        )
        """The one workspace's client (``SLACK_BOT_TOKEN``); in OAuth mode a client without a token, for the OAuth
        flow's own calls (``oauth.v2.access``). Every call about a workspace goes through ``clients``."""
        self.clients: SlackClients = (
            InstalledClients(stores.installations, template=self.slack) if settings.oauth else OneWorkspace(self.slack)
        )
        """Each workspace's client: the one token's, or (OAuth) its installation's."""
        policies = load_policy(settings.approval_policy) if settings.approval_policy else PolicyBook.default()
        self.policies = policies.with_default_expiry(settings.default_expiry)
        self.modals = Modals(views=stores.modal_views)
        directory = Directory(clients=self.clients, redis_client=redis_client)
        self.decisions = decisions = DecisionService(
            approvals=stores.approvals,
            audit=stores.audit,
            signatures=stores.signatures,
            directory=directory,
            clock=clock,
        )
        self.grant_flow = GrantFlow(grants=stores.grants, audit=stores.audit, decisions=decisions, clock=clock)
        self.edit_flow = EditFlow(edits=stores.edits, audit=stores.audit, decisions=decisions, clock=clock)
        self.attending = Attending(outbox=stores.outbox, decisions=decisions, clock=clock)
        self.home_queue = HomeQueue(
            approvals=stores.approvals,
            trusts=stores.trusts,
            home_viewers=stores.home_viewers,
            decisions=decisions,
            grants=self.grant_flow,
            directory=directory,
            clock=clock,
        )
        self.uninstalls = Uninstalls(
            installations=stores.installations,
            approvals=stores.approvals,
            home_viewers=stores.home_viewers,
            audit=stores.audit,
            decisions=decisions,
            clients=self.clients,
            owed=stores.owed_uninstalls,
        )
        """Carries out the uninstalls the listeners recorded (in the worker)."""
        self.escalator = Escalator(
            approvals=stores.approvals,
            schedule=stores.schedule,
            outbox=stores.outbox,
            audit=stores.audit,
            decisions=decisions,
            policies=self.policies,
            clock=clock,
        )
        self.publisher = RoundPublisher(
            redis=stores.redis,
            sessions=stores.sessions,
            approvals=stores.approvals,
            threads=stores.threads,
            schedule=stores.schedule,
            outbox=stores.outbox,
            audit=stores.audit,
            grants=stores.grants,
            decisions=decisions,
            policies=self.policies,
            retention_s=retention_s,
            clock=clock,
        )
        self.runner = SessionRunner(
            sessions=stores.sessions,
            approvals=stores.approvals,
            threads=stores.threads,
            trusts=stores.trusts,
            jobs=stores.jobs,
            outbox=stores.outbox,
            audit=stores.audit,
            agent_factory=agent_factory or load_agent_factory(settings.agent_factory),
            publisher=self.publisher,
            external=ApiOutcomes(
                redis=stores.redis,
                api_requests=stores.api_requests,
                api_keys=stores.api_keys,
                approvals=stores.approvals,
                audit=stores.audit,
                retention_s=retention_s,
            ),
        )
        self.deliverer = Deliverer(
            clients=self.clients,
            outbox=stores.outbox,
            approvals=stores.approvals,
            redis=stores.redis,
            home_queue=self.home_queue,
            lease_s=settings.outbox_lease_seconds,
            concurrency=settings.outbox_concurrency,
            home_refresh_s=settings.home_refresh_seconds,
        )
        # The workspace the bot is installed in: asked once, when the first API request needs it.
        installed_in = functools.cache(lambda: str(self.slack.auth_test()["team_id"]))
        self.api_requests = ApiRequests(
            api_requests=stores.api_requests,
            approvals=stores.approvals,
            audit=stores.audit,
            decisions=decisions,
            publisher=self.publisher,
            policies=self.policies,
            team_id=_key_names_no_team if settings.oauth else installed_in,
            clock=clock,
        )
        self.api_waits = WaitSlots(settings.api_max_waits)
        """The long-polls of the HTTP API this process holds (at most ``API_MAX_WAITS``)."""
        self.state_metrics = StateCollector(
            pending=PendingGauges(stores.redis).tally,
            outbox_depth=stores.outbox.pending,
            outbox_dead=stores.outbox.dead_count,
            clock=lambda: clock().timestamp(),
        )
        """What waits in Redis (pending approvals, the outbox), read when ``/metrics`` is scraped."""
        self.http_mounts: dict[str, Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]] = {
            API_PREFIX: api_wsgi_app(requests=self.api_requests, api_keys=stores.api_keys, waits=self.api_waits)
        }
        """The inbound edges served beside ``/slack/events``, by path prefix (the HTTP API at ``/v1/``)."""

    def close(self) -> None:
        """Stop the threads these services started (the deliverer's lanes, the queues' shard reads)."""
        self.deliverer.close()
        self.stores.close()

    def worker(self, *, claim_idle_ms: int | None = None, concurrency: int | None = None) -> Worker:
        """A worker over these services (claim time and concurrency from the settings unless given)."""
        settings = self.settings
        return Worker(
            jobs=self.stores.jobs,
            audit=self.stores.audit,
            runner=self.runner,
            deliverer=self.deliverer,
            escalator=self.escalator,
            build_indexes=functools.partial(index_build.ensure, self.stores),
            uninstalls=self.uninstalls,
            grants=self.stores.grants,
            claim_idle_ms=int(settings.job_claim_seconds * 1000) if claim_idle_ms is None else claim_idle_ms,
            retries=JobRetries(first_s=settings.job_retry_seconds),
            concurrency=settings.worker_concurrency if concurrency is None else concurrency,
            audit_max_entries=settings.audit_max_entries,
            audit_keep_unexported=settings.audit_keep_unexported,
            heartbeats=WorkerHeartbeats(self.stores.redis, beat_every_s=settings.worker_heartbeat_seconds),
        )


DEFAULT_RETRY_S: float = Settings.model_fields["redis_retry_seconds"].default
"""``REDIS_RETRY_SECONDS`` when unset."""
DEFAULT_TIMEOUT_S: float = Settings.model_fields["redis_timeout_seconds"].default
"""``REDIS_TIMEOUT_SECONDS`` when unset."""


def redis_retry(budget_s: float, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> Retry:
    """Retry a lost connection in place (0.1 s, 0.2 s, ... up to 1 s apart) for at most ``budget_s`` in all.

    A short outage (a failover, a restart) then costs a delay instead of a failed step. An attempt that timed out
    (``timeout_s``, the clients' socket timeouts) may time out again: no such attempt starts past the budget.
    """
    backoff = ExponentialBackoff(cap=1.0, base=0.05)
    retries, waited = 0, 0.0
    while waited + backoff.compute(retries + 1) <= budget_s:
        retries += 1
        waited += backoff.compute(retries)
    return _CountedRetry(
        backoff,
        retries,
        supported_errors=(redis.ConnectionError, redis.TimeoutError, TimeoutError),
        budget_s=budget_s,
        timeout_s=timeout_s,
    )


class _CountedRetry(Retry):
    """redis-py's ``Retry``, bounded by time as well as by count, that counts every failed attempt.

    The one place every command of the bot's clients passes through when the server cannot be reached
    (``signoff_redis_errors_total``). A refused connection fails at once and is tried again until the budget is
    spent; a server that accepts but does not answer costs a whole timeout per attempt, so the next attempt starts
    only if it could still end within the budget.
    """

    def __init__(self, *args: Any, budget_s: float, timeout_s: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.budget_s = budget_s
        self.timeout_s = timeout_s

    def call_with_retry(
        self,
        do: Callable[[], Any],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> Any:
        started = time.monotonic()
        self._backoff.reset()  # type: ignore[no-untyped-call]
        failures = 0
        while True:
            try:
                return do()
            except self._supported_errors as error:
                failures += 1
                metrics.redis_failed(error)
                failed_attempts.count()
                # The failure handler runs first: it drops the connection, whose reply may still arrive.
                if with_failure_count:
                    fail(error, failures)
                else:
                    fail(error)
                if is_retryable is not None and not is_retryable(error):
                    raise
                if failures > self._retries:  # the backoff's pauses alone would pass the budget
                    raise
                pause = self._backoff.compute(failures)
                timed_out = isinstance(error, redis.TimeoutError | TimeoutError)
                if timed_out and time.monotonic() - started + pause + self.timeout_s > self.budget_s:
                    raise
                time.sleep(pause)


def connect_redis(
    url: str, *, retry_s: float, timeout_s: float = DEFAULT_TIMEOUT_S, cluster: ClusterMode = "auto"
) -> redis.Redis:
    """A client for ``url`` whose commands ride out a connection lost for up to ``retry_s`` seconds.

    Args:
        url: One server, or any node of a Redis Cluster (a configuration endpoint).
        retry_s: How long one command retries a lost connection in place.
        timeout_s: How long one attempt waits to connect or for a reply (``REDIS_TIMEOUT_SECONDS``).
        cluster: ``auto`` asks the server (``INFO cluster``); ``yes`` or ``no`` decide without asking
            (``REDIS_CLUSTER``, for a proxy or a server that refuses INFO).

    Returns:
        redis-py's ``RedisCluster`` for a cluster (it speaks every command the bot sends, routing
        each to the node that holds its slot; ``bot.store.cluster_client``), else a ``Redis``.
    """
    timeouts = {"socket_timeout": timeout_s, "socket_connect_timeout": timeout_s}
    retry = redis_retry(retry_s, timeout_s=timeout_s)
    if cluster == "yes" or (cluster == "auto" and _is_cluster(url, timeout_s=timeout_s)):
        # Every script and transaction of the bot touches one slot (see state.store and bot.store.keys).
        return cast(redis.Redis, BotRedisCluster.from_url(url, retry=retry, **timeouts))
    return redis.Redis.from_url(url, retry=retry, **timeouts)


def connect_configured_redis(settings: Settings, *, url: str | None = None) -> redis.Redis:
    """``connect_redis`` for ``REDIS_URL`` (or ``url``: the embedded server) with the settings' retry and timeout."""
    target = url or settings.redis_url
    if target is None:
        raise ConfigError("REDIS_URL is not set")
    return connect_redis(
        target,
        retry_s=settings.redis_retry_seconds,
        timeout_s=settings.redis_timeout_seconds,
        cluster=settings.redis_cluster if url is None else "no",
    )


def _is_cluster(url: str, *, timeout_s: float) -> bool:
    """Whether ``url`` names a node of a Redis Cluster.

    A server that cannot be asked is taken as one server: the start-up check then reports it.
    """
    probe = redis.Redis.from_url(
        url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
    )
    try:
        return str(probe.info("cluster").get("cluster_enabled", 0)) == "1"
    except redis.RedisError:
        return False
    finally:
        probe.close()


def installation_seal(settings: Settings) -> TokenSeal | None:
    """What seals the installations' bot tokens (``INSTALLATION_KEYS``); ``None`` with one workspace's bot token.

    Raises:
        ConfigError: OAuth mode without keys (a token would be kept in clear), or a key that is not one.
    """
    keys = settings.installation_keys.get_secret_value().strip() if settings.installation_keys else ""
    if not keys:
        if settings.oauth:
            raise ConfigError(f"INSTALLATION_KEYS is not set: it is {how_to_get('INSTALLATION_KEYS')}.")
        return None
    problem = key_problem(keys)
    if problem is not None:
        raise ConfigError(f"{problem}.")
    return TokenSeal.from_setting(keys)


def load_agent_factory(spec: str) -> AgentFactory:
    """Import ``module:callable``.

    Raises:
        ConfigError: It cannot be imported or is not callable.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"AGENT_FACTORY must look like module:callable, got {spec!r}")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ConfigError(f"AGENT_FACTORY={spec!r} cannot be imported: {error}") from error
    if not callable(factory):
        raise ConfigError(f"AGENT_FACTORY={spec!r} is not callable")
    return factory  # type: ignore[no-any-return]


def _key_names_no_team() -> str:
    """In OAuth mode an API key names the workspace its requests are asked in: one that names none is refused."""
    raise AskProblem(
        "Authorization",
        "this API key names no workspace, and the app is installed in several: "
        "create the client's key with `python -m bot api-key create --name <name> --team <team id>`",
        status=403,
    )
