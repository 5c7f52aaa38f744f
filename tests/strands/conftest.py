"""Fixtures for the Strands bridge tests (the root conftest gives ``redis_server`` and ``redis_client``)."""

import pytest
import redis

from state import SessionStore


@pytest.fixture
def store(redis_client: redis.Redis) -> SessionStore:
    """The bot's session store on a clean database."""
    return SessionStore(redis_client)
