"""one bad cached user-group record never blinds decisions or App Home."""

import redis

from bot.render import action_ids as ids
from bot.store import keys
from loopback_slack import slack_requests
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, TEAM


def test_a_corrupt_group_cache_does_not_blind_app_home(policed_bot: Bot, redis_client: redis.Redis) -> None:
    bot = policed_bot
    bot.mention("restart checkout")  # service-changes: users + group S0ONCALL
    bot.drain()
    approval_id = bot.approval_id()
    redis_client.set(keys.usergroup(TEAM, "S0ONCALL"), b"{garbage")
    event = {"type": "app_home_opened", "user": APPROVER, "channel": "D1", "tab": "home"}
    assert bot.poster.post_event(slack_requests.event_callback(event)).status == 200
    bot.drain()
    published = [c for c in bot.slack.calls("views.publish") if c.ok and c.args.get("user_id") == APPROVER]
    assert published, "APPROVER's Home was never published"
    assert approval_id in str(published[-1].args["view"])


def test_a_corrupt_group_cache_does_not_stop_a_listed_approver(policed_bot: Bot, redis_client: redis.Redis) -> None:
    bot = policed_bot
    bot.mention("restart checkout")
    bot.drain()
    approval_id = bot.approval_id()
    redis_client.set(keys.usergroup(TEAM, "S0ONCALL"), b"{garbage")
    assert bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER).status == 200
    bot.drain()
    approval = bot.services.stores.approvals.find(approval_id)
    assert approval is not None
    assert approval.decision is not None, bot.ephemeral_texts(APPROVER) + [
        str(c.args) for c in bot.slack.calls("response_url")
    ]
