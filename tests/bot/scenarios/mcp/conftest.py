"""The MCP server's tests: the bot they run against also checks that the server, a client of the HTTP API, sends
only what the API's OpenAPI document calls valid."""

from collections.abc import Iterator

import pytest

from tests.bot.support.api_conformance import assert_documented_requests_only
from tests.bot.support.harness import Bot


@pytest.fixture
def bot(bot: Bot) -> Iterator[Bot]:
    """The scenarios' bot, its API's requests checked once the test is done."""
    yield bot
    assert_documented_requests_only(bot.api)
