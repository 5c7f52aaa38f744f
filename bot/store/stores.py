"""Every record's owner on one Redis client, built together: what the bot's flows read and write through.

One place builds the storage layer and each owner once per process; the composition root (``bot.services``) hands
each flow and listener only the owners it uses, so a signature shows what it reads and writes.
"""

from dataclasses import dataclass
from typing import Self

from redis import Redis

from bot.domain.clock import Clock, system_clock
from bot.store.access.api_keys import ApiKeys
from bot.store.access.grants import GrantStore
from bot.store.access.trusts import TrustStore
from bot.store.approvals.api_requests import ApiRequestStore
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.edits import EditStore
from bot.store.approvals.threads import Threads
from bot.store.audit import Audit
from bot.store.event_deliveries import EventDeliveries
from bot.store.modal_views import ModalViews
from bot.store.queues.jobs import JobQueue
from bot.store.queues.outbox import Outbox
from bot.store.queues.owed_uninstalls import OwedUninstalls
from bot.store.queues.schedule import Schedule
from bot.store.signatures import SeenSignatures
from bot.store.workspaces.home_viewers import DEFAULT_KEEP_S, HomeViewers
from bot.store.workspaces.installations import Installations
from bot.store.workspaces.token_seal import TokenSeal
from state.store import SessionStore

_THIRTY_DAYS_S = 30 * 86_400


@dataclass(frozen=True, slots=True, kw_only=True)
class Stores:
    """The owners of the bot's records (``bot.store.keys`` names each key), sharing one client and one clock."""

    redis: Redis
    """The client every owner uses; transactions that span owners are opened on it."""
    sessions: SessionStore
    """Each agent's serialized state and interrupts (the ``strands.interrupt`` wire format)."""
    approvals: ApprovalStore
    """Approval requests, their decisions, and the index of open ones."""
    outbox: Outbox
    """Slack calls owed, delivered at most once each."""
    jobs: JobQueue
    """The start and resume jobs workers take."""
    audit: Audit
    """The audit stream."""
    schedule: Schedule
    """Reminders, escalation rungs and expiries, due per request."""
    grants: GrantStore
    """Standing approvals and the calls they cover."""
    edits: EditStore
    """Edits made to a call's input before it was approved."""
    trusts: TrustStore
    """Tools trusted for the rest of a session (Strands' ``HumanInTheLoop`` trust)."""
    threads: Threads
    """Which thread each session answers in."""
    api_keys: ApiKeys
    """The HTTP API's client keys."""
    api_requests: ApiRequestStore
    """Requests asked through the HTTP API, and their outcomes."""
    installations: Installations
    """Each workspace's (or Grid org's) installation and its bot token."""
    signatures: SeenSignatures
    """Slack request signatures already answered (a replayed click is refused)."""
    event_deliveries: EventDeliveries
    """Slack events already handled (a redelivered one is dropped)."""
    home_viewers: HomeViewers
    """Who opened App Home lately (whose tab a change republishes)."""
    modal_views: ModalViews
    """What each modal the bot opened was opened with (a submission is checked against it)."""
    owed_uninstalls: OwedUninstalls
    """Uninstalls acked to Slack that a worker still owes."""

    @classmethod
    def on(
        cls,
        client: Redis,
        *,
        retention_s: int = _THIRTY_DAYS_S,
        clock: Clock = system_clock,
        seal: TokenSeal | None = None,
        decision_replicas: int = 0,
        home_viewer_s: float = DEFAULT_KEEP_S,
    ) -> Self:
        """Every owner on ``client``.

        ``retention_s``: how long an agent's state outlives its last write; ``seal``: what seals the installations'
        tokens (``INSTALLATION_KEYS``); ``decision_replicas``: replicas that must hold a decision
        (``REDIS_DECISION_REPLICAS``); ``home_viewer_s``: how long an App Home viewer is kept (``HOME_VIEWER_HOURS``).
        """

        def seconds() -> float:
            return clock().timestamp()

        audit = Audit(client, clock=seconds)
        return cls(
            redis=client,
            sessions=SessionStore(client, ttl_seconds=retention_s),
            approvals=ApprovalStore(client, decision_replicas=decision_replicas),
            outbox=Outbox(client, clock=seconds),
            jobs=JobQueue(client),
            audit=audit,
            schedule=Schedule(client, clock=clock),
            grants=GrantStore(client, replicas=decision_replicas, audit=audit),
            edits=EditStore(client),
            trusts=TrustStore(client, kept_s=retention_s),
            threads=Threads(client),
            api_keys=ApiKeys(client),
            api_requests=ApiRequestStore(client),
            installations=Installations(client, seal=seal),
            signatures=SeenSignatures(client),
            event_deliveries=EventDeliveries(client),
            home_viewers=HomeViewers(client, keep_s=home_viewer_s, clock=seconds),
            modal_views=ModalViews(client),
            owed_uninstalls=OwedUninstalls(client, clock=seconds),
        )

    def close(self) -> None:
        """Stop the threads the queues read a cluster's shards on (the client is the caller's to close)."""
        for queue in (self.outbox, self.jobs, self.schedule):
            queue.rests.close()
