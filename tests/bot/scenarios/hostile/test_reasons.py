"""Red team: a required deny reason cannot be satisfied by invisible characters."""

import pytest

from tests.bot.support.harness import Bot, is_decided
from tests.bot.support.people import APPROVER


@pytest.mark.parametrize("invisible", ["\u200b", "\u2800\u3164", "\u200e\u200f", "\u00ad"])
def test_a_required_reason_cannot_be_invisible(policed_bot: Bot, invisible: str) -> None:
    bot = policed_bot
    assert bot.mention("roll back payments").status == 200
    bot.drain()
    approval_id = bot.approval_id()
    response = bot.submit_deny(approval_id, user=APPROVER, reason=invisible)
    bot.drain()
    assert response.status == 200
    assert not is_decided(bot.approval_messages()[0]), "a deny with an invisible 'reason' was recorded"
