"""Log lines: human-readable by default, one JSON object per line with ``LOG_FORMAT=json``.

A JSON line holds ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, the ids of what the line is
about when known (``session_id``, ``approval_id``, ``job_id``, ``job_kind``) and ``exception`` (the traceback)
when there is one. The ids come from ``log_context`` (set where a job or a decision is handled, so every line
logged inside says which) or from a call's ``extra=``. While a span is recorded (``bot.observe.tracing``), a
line also holds its ``trace_id`` and ``span_id``: a log line leads to its trace.
"""

import contextvars
import json
import logging
import logging.config
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Final, Literal

from bot.observe import tracing

LogFormat = Literal["text", "json"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
CONTEXT_FIELDS: Final = ("session_id", "approval_id", "job_id", "job_kind")
TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s %(message)s"

_context: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("signoff_log_context", default=None)


@contextmanager
def log_context(**ids: str | None) -> Iterator[None]:
    """Every line logged inside (in this thread or task) carries ``ids`` (those given, not None)."""
    given = {name: value for name, value in ids.items() if value}
    token = _context.set({**(_context.get() or {}), **given})
    try:
        yield
    finally:
        _context.reset(token)


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (a traceback is a field, its newlines escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON: time, level, logger, message, the log context and any exception or stack."""
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(_context.get() or {})
        line.update(tracing.log_ids())
        for name in CONTEXT_FIELDS:
            value = getattr(record, name, None)
            if value:
                line[name] = str(value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def formatter(log_format: LogFormat) -> logging.Formatter:
    """The formatter of ``LOG_FORMAT``."""
    return JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)


def logging_config(log_format: LogFormat, level: LogLevel = "INFO") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` dict: every record to stderr in ``log_format``.

    Gunicorn's own error log goes there too, and its access log (``--access-logfile -``) to stdout, in the same format.
    """
    shape: dict[str, Any] = {"()": JsonFormatter} if log_format == "json" else {"format": TEXT_FORMAT}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"signoff": shape},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "signoff", "stream": "ext://sys.stderr"},
            "stdout": {"class": "logging.StreamHandler", "formatter": "signoff", "stream": "ext://sys.stdout"},
        },
        "root": {"level": level, "handlers": ["stderr"]},
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": ["stderr"], "propagate": False},
            "gunicorn.access": {"level": "INFO", "handlers": ["stdout"], "propagate": False},
        },
    }


def configure(log_format: LogFormat, level: LogLevel = "INFO") -> None:
    """Send every log record to stderr in ``log_format`` (replacing what was configured before)."""
    logging.config.dictConfig(logging_config(log_format, level))
