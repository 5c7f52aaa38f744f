"""Every Prometheus metric the bot records, defined once (names, labels, buckets), and the calls that record them.

Names follow Prometheus' conventions (``signoff_`` prefix, ``_total`` counters, ``_seconds`` durations). Labels
take values from small, fixed sets (a source, an outcome, a job kind, a Slack method and error code, a policy's
name from the operator's file): never an id, a user or a channel. The state kept in Redis (pending approvals,
the outbox) is read at scrape time by ``bot.observe.state_collector``; everything here counts what this process
did. Under gunicorn the counts of its workers are added up (``prometheus_client``'s multiprocess mode,
``PROMETHEUS_MULTIPROC_DIR``: see ``bot.cli.gunicorn_config``).
"""

import re
from typing import Final

from prometheus_client import Counter, Histogram, disable_created_metrics

# No ``_created`` series: a second series per counter that nothing here needs (and multiprocess mode lacks).
disable_created_metrics()  # type: ignore[no-untyped-call]

DECISIONS: Final = Counter(
    "signoff_decisions_total",
    "Decisions recorded, by outcome (approve, deny, expired, answer: a question's) and source (button, modal, reply, "
    "edit, grant_button, withdrawal: the HTTP API's cancel, expiry, policy: a rule's tier, grant: a standing "
    "approval, uninstall: the app left the workspace).",
    ["outcome", "source"],
)
CLICK_SECONDS: Final = Histogram(
    "signoff_click_seconds",
    "Time to answer an Approve click at the edge, from its signature checked to its answer (Slack waits 3 s).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0),
)
TIME_TO_DECISION_SECONDS: Final = Histogram(
    "signoff_time_to_decision_seconds",
    "Time from an approval's message being posted (or, for expiries and withdrawals, from the request) to its "
    "decision, by source.",
    ["source"],
    buckets=(5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400),
)
JOBS: Final = Counter(
    "signoff_jobs_total",
    "Jobs a worker handled, by kind (start, resume) and outcome (done, retry, failed, abandoned, quarantined).",
    ["kind", "outcome"],
)
JOB_SECONDS: Final = Histogram(
    "signoff_job_seconds",
    "Time a worker spent on one job (the agent's run, its model calls included), by kind.",
    ["kind"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
OUTBOX_RETRIES: Final = Counter(
    "signoff_outbox_retries_total",
    "Slack deliveries put back to be tried again, by reason (rate_limited, slack_error, network, failure).",
    ["reason"],
)
OUTBOX_PARKED: Final = Counter(
    "signoff_outbox_parked_total",
    "Outbox entries given up as undeliverable and parked in the dead letters, by entry kind.",
    ["kind"],
)
OUTBOX_DROPPED: Final = Counter(
    "signoff_outbox_dropped_total",
    "Outbox entries dropped unsent because no token can send them (the app left the workspace), by reason "
    "(not_installed).",
    ["reason"],
)
ESCALATION_STEPS: Final = Counter(
    "signoff_escalation_steps_total",
    "Scheduled steps fired on pending requests, by kind (remind, escalate, expire).",
    ["kind"],
)
SLACK_API_ERRORS: Final = Counter(
    "signoff_slack_api_errors_total",
    "Slack Web API calls that failed, by method and error (Slack's error code, http_<status>, or unreachable).",
    ["method", "error"],
)
REDIS_ERRORS: Final = Counter(
    "signoff_redis_errors_total",
    "Redis commands that failed to reach the server (each attempt, retried or not), by error type "
    "(ConnectionError, TimeoutError).",
    ["error"],
)
UNREPLICATED_WRITES: Final = Counter(
    "signoff_unreplicated_writes_total",
    "Decisions (and revokes' steps) recorded on the master that fewer replicas than REDIS_DECISION_REPLICAS "
    "acknowledged in time (a failover now could lose them; a revoke is then reported unfinished).",
)

INSTRUMENTS: Final = (
    DECISIONS,
    CLICK_SECONDS,
    TIME_TO_DECISION_SECONDS,
    JOBS,
    JOB_SECONDS,
    OUTBOX_RETRIES,
    OUTBOX_PARKED,
    OUTBOX_DROPPED,
    ESCALATION_STEPS,
    SLACK_API_ERRORS,
    REDIS_ERRORS,
    UNREPLICATED_WRITES,
)
"""Every counter and histogram the processes record into (the gauges read from Redis: ``state_collector``)."""

_SLACK_ERROR: Final = re.compile(r"[a-z0-9_]{1,48}")
"""Slack's error codes (``invalid_auth``, ``channel_not_found``): a server answering anything else adds no label."""
JOB_KINDS: Final = ("start", "resume")
"""Job kinds that get a label of their own (anything else read from the stream is counted as ``other``)."""


_DECIDED: Final[dict[tuple[str, str], tuple[Counter, Histogram]]] = {}
"""The children ``decided`` records into, by outcome and source (a click's answer waits for it: ``labels`` checks and
locks on every call, a dict look-up does not). Bounded: both labels come from small fixed sets."""


def decided(*, outcome: str, source: str, waited_s: float | None) -> None:
    """One decision recorded; ``waited_s``: how long it waited for it, when known."""
    children = _DECIDED.get((outcome, source))
    if children is None:
        labelled = (DECISIONS.labels(outcome=outcome, source=source), TIME_TO_DECISION_SECONDS.labels(source=source))
        children = _DECIDED.setdefault((outcome, source), labelled)
    counted, waited = children
    counted.inc()
    if waited_s is not None and waited_s >= 0:
        waited.observe(waited_s)


def job_handled(*, kind: str, outcome: str, took_s: float) -> None:
    """One job handled by a worker."""
    label = kind if kind in JOB_KINDS else "other"
    JOBS.labels(kind=label, outcome=outcome).inc()
    JOB_SECONDS.labels(kind=label).observe(took_s)


def slack_api_failed(*, method: str, error: str) -> None:
    """One failed Slack Web API call (an error that is not shaped like Slack's codes is counted as ``other``)."""
    SLACK_API_ERRORS.labels(method=method, error=error if _SLACK_ERROR.fullmatch(error) else "other").inc()


def redis_failed(error: BaseException) -> None:
    """One Redis command that did not reach the server."""
    REDIS_ERRORS.labels(error=type(error).__name__).inc()


def unreplicated_write() -> None:
    """A decision fewer replicas than asked acknowledged in time."""
    UNREPLICATED_WRITES.inc()
