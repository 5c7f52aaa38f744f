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


def fail_logging(problem: object) -> int:
    """``fail`` for a malformed ``LOG_FORMAT`` or ``LOG_LEVEL``, in one JSON line when ``LOG_FORMAT`` asks for JSON.

    A log pipeline reads this stderr: a bad ``LOG_LEVEL`` must not turn its one refusal into text.
    """
    if os.environ.get("LOG_FORMAT", "").strip().lower() != "json":
        return fail(problem)
    logs.configure("json")
    logging.getLogger("bot").error("cannot start: %s", problem)
    return 2
