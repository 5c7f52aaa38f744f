"""A clock in seconds that tests move by hand (the kind the session store, the outbox and the audit take)."""


class SecondsClock:
    """Seconds since the epoch, moved by hand (``now``)."""

    def __init__(self) -> None:
        """Start at a fixed moment."""
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        """The current time."""
        return self.now
