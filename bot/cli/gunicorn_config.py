"""gunicorn's settings for the web process (the Procfile: ``gunicorn -c python:bot.cli.gunicorn_config ...``).

Its own log lines (the arbiter's, the workers', the access log) come out in ``LOG_FORMAT`` like the bot's,
so a JSON log pipeline gets nothing but JSON. A malformed ``LOG_FORMAT`` or ``LOG_LEVEL`` ends gunicorn at
once with one message naming it (exit 2), before any worker boots. So does what a worker would refuse (a
setting, ``REDIS_URL`` unset or not answering, the policy file, a token Slack refuses), before the port is
bound: one log line in ``LOG_FORMAT``, not each worker's traceback and gunicorn's exit status 3.

An address of its own gunicorn cannot listen on (``--bind``, or ``PORT``: taken, or no such address) ends it the same
way, naming ``PORT`` when the port is ``PORT``'s: gunicorn would try five times, then exit 1 in words of its own.

With ``METRICS_PORT`` set, gunicorn listens there too (on ``HOST``), and ``/metrics`` and ``/readyz`` are served there
only. (A ``SIGHUP`` reload rebinds the command line's addresses alone: restart instead.)

Metrics: gunicorn's workers are processes, and a scrape reaches one of them; so each writes its counts under
``PROMETHEUS_MULTIPROC_DIR`` (a fresh temporary folder unless set; emptied at start, since counts of an
earlier run would be added in) and ``/metrics`` on any of them adds them all up. A worker that exits has its
live gauges dropped.
"""

import logging
import os
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from gunicorn.util import parse_address  # type: ignore[import-untyped]

from bot.cli.exits import fail_logging
from bot.domain.policy.policy_file import PolicyError
from bot.observe import logs, trace_export
from bot.settings import ConfigError, load_log_settings, load_settings

logger = logging.getLogger(__name__)

# Before the workers import prometheus_client (neither import above does): it picks its storage when first imported.
_metrics_dir = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR") or tempfile.mkdtemp(prefix="signoff-prometheus-"))
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(_metrics_dir)

try:
    _log_settings = load_log_settings()
except ConfigError as _error:
    sys.exit(fail_logging(_error))

logconfig_dict = logs.logging_config(_log_settings.log_format, _log_settings.log_level)


def on_starting(server: Any) -> None:
    """Refuse, before binding, what every worker would refuse; bind ``METRICS_PORT`` too; start from no counts."""
    _metrics_dir.mkdir(parents=True, exist_ok=True)
    _refuse_a_taken_bind(server.cfg)
    status = _built_in_a_child()
    if status != 0:
        sys.exit(status if status > 0 else 1)  # a child ended by a signal has a negative status
    settings = load_settings("http")  # the child has built the app from these: they load
    if settings.metrics_port is not None:
        problem = _unbindable(settings.host, settings.metrics_port)
        if problem is not None:
            # gunicorn would try five times, then end with status 1 and no word of METRICS_PORT.
            logger.error("cannot start: HOST, METRICS_PORT: cannot listen on %s:%d (%s)", *problem)
            sys.exit(2)
        # Each worker serves both listeners; the app answers each port with its own routes (http.probes_apart).
        host = f"[{settings.host}]" if ":" in settings.host else settings.host
        server.cfg.set("bind", [*server.cfg.bind, f"{host}:{settings.metrics_port}"])
    # After the check: its child may have written counts (its call to Slack), and the folder may hold an earlier run's.
    for stale in _metrics_dir.glob("*.db"):
        stale.unlink()


def child_exit(_server: Any, worker: Any) -> None:
    """A worker gone: its live gauges no longer count (its counters' files stay, so totals never go back)."""
    from prometheus_client import multiprocess  # noqa: PLC0415 imported here: only the arbiter needs it, late

    multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


def worker_exit(_server: Any, _worker: Any) -> None:
    """A worker ending: send the spans it still holds (its batch would wait for the next export otherwise)."""
    trace_export.flush()


def _refuse_a_taken_bind(cfg: Any) -> None:
    """End gunicorn (status 2) with one line when it cannot listen on an address it was given (``cfg.bind``).

    Named ``PORT`` when the port is ``PORT``'s (the Procfile's ``--bind 0.0.0.0:$PORT``, or gunicorn's default with
    ``PORT`` set), else ``--bind``. A socket path and an inherited descriptor are gunicorn's to check, and so are the
    listeners a new master inherits (``GUNICORN_FD`` on a ``USR2`` upgrade, ``LISTEN_FDS`` from systemd): taken by
    the old master, as they should be.
    """
    if os.environ.get("GUNICORN_FD") or os.environ.get("LISTEN_FDS"):
        return
    for address in cfg.bind:
        parsed = parse_address(address)
        if not isinstance(parsed, tuple):
            continue
        host, port = parsed
        problem = _unbindable(host, int(port), reuse_port=bool(cfg.reuse_port))
        if problem is not None:
            named = "PORT" if os.environ.get("PORT", "").strip() == str(port) else "--bind"
            logger.error("cannot start: %s: cannot listen on %s (%s)", named, address, problem[2])
            sys.exit(2)


def _unbindable(host: str, port: int, *, reuse_port: bool = False) -> tuple[str, int, OSError] | None:
    """``(host, port, why)`` when nothing can listen there (taken, or no such address), else ``None``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds: a port in TIME_WAIT is free
        if reuse_port:  # gunicorn's --reuse-port: a port others listen on with it too is shared, not taken
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            return host, port, error
    return None


def _built_in_a_child() -> int:
    """Build the app as each worker will, in a child process: 0, or the status gunicorn should end with.

    In a child so that nothing the build opens (Redis connections, metric files, Bolt's executor) is inherited by
    the workers, which build their own.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child:
        return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    status = 1
    try:
        from bot.cli import web  # noqa: PLC0415 imported here, in the child: it imports prometheus_client

        web.web_app(load_settings("http"))
        status = 0
    except (ConfigError, PolicyError) as error:
        logger.error("cannot start: %s", error)
        status = 2
    except Exception:
        logger.exception("cannot start: building the app failed")
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)  # never on into gunicorn's code: this is a copy of its master
