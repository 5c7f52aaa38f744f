"""Fixtures for agent tests: a session store on the real Redis, and each provider's double serving its API."""

from collections.abc import Iterator

import pytest
import redis

from state import SessionStore
from tests.agent.providers import AnthropicDouble, BedrockDouble, OpenAIDouble


@pytest.fixture
def store(redis_client: redis.Redis) -> SessionStore:
    """A session store on a clean database."""
    return SessionStore(redis_client)


@pytest.fixture
def anthropic_api() -> Iterator[AnthropicDouble]:
    """The Messages API, served on a loopback port."""
    with AnthropicDouble.serving() as double:
        yield double


@pytest.fixture
def openai_api() -> Iterator[OpenAIDouble]:
    """The chat completions API, served on a loopback port."""
    with OpenAIDouble.serving() as double:
        yield double


@pytest.fixture
def bedrock() -> Iterator[BedrockDouble]:
    """A bedrock-runtime client whose answers botocore's ``Stubber`` gives."""
    with BedrockDouble.serving() as double:
        yield double
