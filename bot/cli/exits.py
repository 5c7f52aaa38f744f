"""How a command stops on a problem: one ``signoff: ...`` line on stderr, and the status ``main`` exits with."""

import logging
import os
import sys

from bot.observe import logs


def fail(problem: object, *, status: int = 2) -> int:
    """Print ``signoff: <problem>`` on stderr and return ``status``.

    Args:
        problem: What went wrong, as the operator reads it (an exception prints its message).
        status: 2 (the default) when a setting, an argument or the environment is unusable and nothing was done;
            1 when the command ran and what it was asked for cannot be done.
    """
    print(f"signoff: {problem}", file=sys.stderr)
    return status


def fail_start(problem: object, *, as_json: bool) -> int:
    """A process that cannot start: ``fail``'s line, or one JSON log line when the logs are JSON; status 2.

    A log pipeline reads this stderr: nothing but JSON may reach it.
    """
    if not as_json:
        return fail(problem)
    logging.getLogger("bot").error("cannot start: %s", problem)
    return 2


def fail_logging(problem: object) -> int:
    """``fail_start`` for a malformed ``LOG_FORMAT`` or ``LOG_LEVEL``, in JSON when ``LOG_FORMAT`` asks for it.

    A bad ``LOG_LEVEL`` must not turn the one refusal into text.
    """
    as_json = os.environ.get("LOG_FORMAT", "").strip().lower() == "json"
    if as_json:
        logs.configure("json")
    return fail_start(problem, as_json=as_json)
