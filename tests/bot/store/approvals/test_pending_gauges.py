"""The pending gauges stay exact through every way a request ends, and a scrape costs the same however many wait."""

from collections import Counter

import redis

from bot.observe.state_collector import AGE_BUCKETS, age_bucket
from bot.render import action_ids as ids
from bot.store import keys
from bot.store.approvals.pending_gauges import PendingGauges
from tests.bot.support.crowd import commands_processed, other_approvals
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER, REQUESTER, TEAM
from tests.redis_targets import on_both

pytest_generate_tests = on_both


def _scanned(bot: Bot, now_s: float) -> Counter[tuple[str, str]]:
    """What the gauges counted before: every open approval read one by one."""
    return Counter((policy, age_bucket(now_s - at)) for at, policy in bot.services.stores.approvals.open_policies())


def _exact(bot: Bot) -> int:
    now_s = bot.services.clock().timestamp()
    tally = PendingGauges(bot.services.stores.redis).tally(now_s)
    assert dict(tally.counts) == dict(_scanned(bot, now_s))
    return sum(tally.counts.values())


def test_the_gauges_follow_publish_decide_expire_withdraw_and_uninstall(redis_client: redis.Redis) -> None:
    with running_bot(redis_client) as bot:
        asked = [bot.ask(f"restart checkout {index}")[0] for index in range(4)]
        assert _exact(bot) == 4

        assert bot.click(ids.APPROVE_ACTION, asked[0], user=APPROVER).status == 200
        assert _exact(bot) == 3
        expiring = bot.services.stores.approvals.find(asked[1])
        assert expiring is not None
        bot.services.decisions.expire(expiring, outcome="deny")
        assert _exact(bot) == 2
        assert bot.submit_deny(asked[2], user=REQUESTER, reason="not needed after all").status == 200  # withdrawn
        assert _exact(bot) == 1
        bot.services.uninstalls.uninstalled(team_id=TEAM, enterprise_id=None)
        assert _exact(bot) == 0


def test_a_scrape_costs_the_same_with_thousands_waiting(redis_client: redis.Redis) -> None:
    gauges = PendingGauges(redis_client)
    gauges.tally(0)  # the script loaded

    def scrape_cost() -> int:
        before = commands_processed(redis_client)
        tally = gauges.tally(2_000_000_000)
        assert sum(tally.counts.values()) == waiting
        return commands_processed(redis_client) - before

    waiting = 10
    other_approvals(redis_client, waiting)
    few = scrape_cost()
    other_approvals(redis_client, 3_000, team_id="T0MORE")
    waiting += 3_000
    assert scrape_cost() == few
    assert gauges.tally(2_000_000_000).counts.keys() == {("default", AGE_BUCKETS[-1][1])}


def test_a_quarantined_approval_is_no_longer_counted(redis_client: redis.Redis) -> None:
    with running_bot(redis_client) as bot:
        kept, broken = (bot.ask(f"restart checkout {index}")[0] for index in range(2))
        assert _exact(bot) == 2
        approvals = bot.services.stores.approvals
        session_id = approvals.session_of(broken)
        assert session_id is not None
        redis_client.hset(keys.approval(session_id, broken), "request", "{not json")

        assert approvals.find_readable(broken) is None  # a reader met it: quarantined
        assert broken in approvals.quarantined()
        assert _exact(bot) == 1
        assert approvals.find_readable(kept) is not None
