"""Errors raised by the interrupt system and the session store."""


class SessionException(Exception):
    """A stored or restored session cannot be used as it is (malformed, corrupted or foreign data).

    Same name and role as ``strands.types.exceptions.SessionException``.
    """


class UnstorableValueError(TypeError):
    """A value to save has no JSON form (an object, a set, NaN).

    The same write fails every time, so a caller reports it instead of retrying. A ``TypeError``, as the store
    documents.
    """


class ConflictError(Exception):
    """A compare-and-set write found another version than the one it was based on.

    Attributes:
        session_id: The session that was written.
        expected_version: The version the writer read and based its change on.
        actual_version: The version found in the store (0 when the session does not exist).
    """

    def __init__(self, session_id: str, expected_version: int, actual_version: int) -> None:
        """Record both versions so the caller can reload and retry."""
        super().__init__(
            f"session_id=<{session_id}>, expected_version=<{expected_version}>, "
            f"actual_version=<{actual_version}> | session changed since it was read"
        )
        self.session_id = session_id
        self.expected_version = expected_version
        self.actual_version = actual_version
