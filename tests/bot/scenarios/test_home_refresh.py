"""App Home rebuilds: only for who may see the change, one per person per window, none lost, none for who left.

Time comes from one manual clock shared by the bot (the window, the viewers' age); Slack's slow answer is real time.
"""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.render.texts import app_home
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, OUTSIDER, REQUESTER, SECOND_APPROVER

WINDOW_S = 2.0


@contextmanager
def _bot(redis_client: redis.Redis) -> Iterator[tuple[Bot, ManualClock]]:
    clock = ManualClock()
    with running_bot(redis_client, clock=clock, home_refresh_seconds=WINDOW_S) as bot:
        bot.slack.set_channel_members(CHANNEL, [REQUESTER, APPROVER, SECOND_APPROVER, "U0BOT"])  # not OUTSIDER
        yield bot, clock


def _published(bot: Bot, user: str) -> list[str]:
    """Each App Home view published for ``user``, as JSON text."""
    return [
        json.dumps(call.args["view"], ensure_ascii=False)
        for call in bot.slack.calls("views.publish")
        if call.args["user_id"] == user
    ]


def test_a_burst_rebuilds_each_viewer_who_may_see_it_once_after_the_window(redis_client: redis.Redis) -> None:
    with _bot(redis_client) as (bot, clock):
        for viewer in (APPROVER, SECOND_APPROVER, OUTSIDER):
            bot.open_home(viewer)
        asked = [bot.ask(f"restart checkout {index}")[0] for index in range(3)]
        assert [len(_published(bot, viewer)) for viewer in (APPROVER, SECOND_APPROVER, OUTSIDER)] == [1, 1, 1]

        clock.advance(WINDOW_S)
        bot.drain()

        for viewer in (APPROVER, SECOND_APPROVER):
            [_opened, rebuilt] = _published(bot, viewer)  # three posts, one rebuild at the window's end
            assert all(approval_id in rebuilt for approval_id in asked)
        assert len(_published(bot, OUTSIDER)) == 1  # not in the channel: none of it is theirs to see


def test_a_change_while_a_tab_is_built_is_shown_at_the_windows_end(redis_client: redis.Redis) -> None:
    with _bot(redis_client) as (bot, clock):
        approval_id, _session = bot.ask()
        bot.slack.slow_next("views.publish", 1.0)  # the tab below is built, then its publish waits on Slack
        building = threading.Thread(target=bot.open_home, args=(APPROVER,))
        building.start()
        bot.slack.wait_for("views.publish")
        assert app_home.home_queue_empty() not in _published(bot, APPROVER)[-1]  # built before the decision

        assert bot.click(ids.APPROVE_ACTION, approval_id, user=SECOND_APPROVER).status == 200
        bot.worker.deliverer.deliver_due()  # the message shows the decision, and the tab is asked for again
        building.join()
        clock.advance(WINDOW_S)
        bot.drain()

        [_built, latest] = _published(bot, APPROVER)
        assert app_home.home_queue_empty() in latest  # nothing left to decide
        assert f"Approved by <@{SECOND_APPROVER}>" in latest  # among the recent decisions


def test_a_viewer_who_stopped_opening_home_is_rebuilt_no_more(redis_client: redis.Redis) -> None:
    with _bot(redis_client) as (bot, clock):
        bot.open_home(APPROVER)
        clock.advance(23 * 3600)
        bot.ask("restart checkout")
        clock.advance(WINDOW_S)
        bot.drain()
        assert len(_published(bot, APPROVER)) == 2  # within HOME_VIEWER_HOURS (24): still rebuilt

        clock.advance(3600)
        bot.ask("restart payments")
        clock.advance(WINDOW_S)
        bot.drain()
        assert len(_published(bot, APPROVER)) == 2  # a day without opening it: forgotten
