"""A click Redis could not take (stopped, or failing over): what it must leave, checked alike for either outage."""

from bot.render import action_ids as ids
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER


def ephemeral_answers(bot: Bot) -> list[str]:
    """What the bot told people through ``response_url``, in order."""
    return [str(call.args.get("text", "")) for call in bot.slack.calls("response_url")]


def assert_it_wrote_nothing_and_the_next_click_decides(bot: Bot, approval_id: str) -> None:
    """The lost click left the approval undecided and audited nothing; the approver's next click decides it."""
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is None
    assert [entry.event for entry in bot.services.stores.audit.entries()] == ["request"]

    assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
    bot.drain()
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is not None
    assert approval.decision.decided_by == APPROVER
