"""The interrupt system and its persistence: no Slack and no model code lives here."""

from state.errors import ConflictError, SessionException, UnstorableValueError
from state.interrupt import Interrupt, InterruptException, PendingToolExecution
from state.redis_server import RedisServer, RedisServerError, find_server_binary
from state.store import Session, SessionStore, keys_for
from state.validation import ShapeError

__all__ = [
    "ConflictError",
    "Interrupt",
    "InterruptException",
    "PendingToolExecution",
    "RedisServer",
    "RedisServerError",
    "Session",
    "SessionException",
    "SessionStore",
    "ShapeError",
    "UnstorableValueError",
    "find_server_binary",
    "keys_for",
]
