"""Binds an agent to its session in ``state.store``: load once, save only what moved."""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import redis

from state.interrupt import _InterruptState
from state.shapes import Message
from state.store import SessionStore

logger = logging.getLogger(__name__)

TRANSIENT_ERRORS: Final = (redis.ConnectionError, redis.TimeoutError)
"""Redis errors worth retrying in place: the server is briefly unreachable (restart, failover, network)."""
_RETRY_FIRST_DELAY_S: Final = 0.05
_RETRY_MAX_DELAY_S: Final = 1.0

T = TypeVar("T")


@dataclass
class AgentState:
    """The agent's own JSON state; every change bumps a counter so saves can be skipped."""

    _values: dict[str, Any]
    _version: int = 0

    def get(self, key: str, default: Any = None) -> Any:
        """Return the value stored under ``key``."""
        return self._values.get(key, default)

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (must be JSON-serializable to be saved)."""
        self._values[key] = value
        self._version += 1

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        if key in self._values:
            del self._values[key]
            self._version += 1

    def to_dict(self) -> dict[str, Any]:
        """The values, as saved."""
        return dict(self._values)


class SessionBinding:
    """Persists one agent's messages, state and interrupt state under a session id.

    Writes are compare-and-set: if another process wrote the session since this one read it,
    ``save`` raises ``state.ConflictError`` instead of overwriting (the caller reloads).
    """

    def __init__(self, store: SessionStore, session_id: str) -> None:
        """Remember where to save; call ``load`` before the first ``save``."""
        self.store = store
        self.session_id = session_id
        self.version = 0
        self._saved_mark: tuple[int, int, int] | None = None

    def load(self) -> tuple[list[Message], AgentState, _InterruptState]:
        """Read the session, or start an empty one."""
        session = self.store.load(self.session_id)
        if session is None:
            return [], AgentState({}), _InterruptState()
        self.version = session.version
        loaded = (
            session.messages,
            AgentState(dict(session.agent_state)),
            _InterruptState.from_dict(session.interrupt_state),
        )
        self._saved_mark = self._mark(*loaded)
        return loaded

    @property
    def stored_messages(self) -> int:
        """How many messages the stored session holds, as of this binding's last load or save."""
        return self._saved_mark[0] if self._saved_mark is not None else 0

    def save(self, messages: list[Message], agent_state: AgentState, interrupt_state: _InterruptState) -> bool:
        """Write if anything changed since the last load or save; return whether it wrote."""
        mark = self._mark(messages, agent_state, interrupt_state)
        if mark == self._saved_mark:
            return False
        self.version = self.store.save(
            self.session_id,
            expected_version=self.version,
            messages=messages,
            agent_state=agent_state.to_dict(),
            interrupt_state=interrupt_state.to_dict(),
        )
        self._saved_mark = mark
        return True

    def save_retrying(
        self, messages: list[Message], agent_state: AgentState, interrupt_state: _InterruptState, *, within_s: float
    ) -> bool:
        """``save``, retried in place while Redis is unreachable (see ``retrying``).

        For writes that must not be lost to a short outage: a tool's result, a call's start.
        """
        return retrying(
            lambda: self.save(messages, agent_state, interrupt_state),
            within_s=within_s,
            what=f"session_id=<{self.session_id}> | save",
        )

    @staticmethod
    def _mark(
        messages: list[Message], agent_state: AgentState, interrupt_state: _InterruptState
    ) -> tuple[int, int, int]:
        # Messages are only ever appended, and both states count their mutations.
        return (len(messages), agent_state._version, interrupt_state._get_version())


def retrying(operation: Callable[[], T], *, within_s: float, what: str) -> T:
    """Run ``operation``, again with backoff while Redis is unreachable, for up to ``within_s``.

    A write whose reply was lost and that is sent again is answered as written by the store's
    scripts (same version, same content), so retrying a compare-and-set write is safe.

    Raises:
        redis.ConnectionError | redis.TimeoutError: Still unreachable after ``within_s``.
    """
    deadline = time.monotonic() + within_s
    delay = _RETRY_FIRST_DELAY_S
    while True:
        try:
            return operation()
        except TRANSIENT_ERRORS as error:
            if time.monotonic() + delay > deadline:
                raise
            logger.warning("%s failed (%s); retrying in %.2fs", what, error, delay)
            time.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX_DELAY_S)
