"""Fixtures for agent tests: a session store on the real Redis."""

import pytest
import redis

from state import SessionStore


@pytest.fixture
def store(redis_client: redis.Redis) -> SessionStore:
    """A session store on a clean database."""
    return SessionStore(redis_client)
