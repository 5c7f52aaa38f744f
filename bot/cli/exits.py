"""How a command stops on a problem: one ``signoff: ...`` line on stderr, and the status ``main`` exits with."""

import sys


def fail(problem: object, *, status: int = 2) -> int:
    """Print ``signoff: <problem>`` on stderr and return ``status``.

    Args:
        problem: What went wrong, as the operator reads it (an exception prints its message).
        status: 2 (the default) when a setting, an argument or the environment is unusable and nothing was done;
            1 when the command ran and what it was asked for cannot be done.
    """
    print(f"signoff: {problem}", file=sys.stderr)
    return status
