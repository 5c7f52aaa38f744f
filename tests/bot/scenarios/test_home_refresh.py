"""App Home rebuilds: only for who may see the change, one per person per window, none lost, none for who left.

Time comes from one manual clock shared by the bot (the window, the viewers' age); Slack's slow answer is real time.
"""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import pytest
import redis
from redis.cluster import RedisCluster

from bench.round_trips import RoundTrips, commands_sent
from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.render.texts import app_home
from bot.store import keys
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, OUTSIDER, REQUESTER, SECOND_APPROVER, TEAM

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


def _counting(redis_url: str, redis_target: str) -> tuple[redis.Redis, RoundTrips]:
    """A client of the target whose writes to the server are counted (a pipeline: one per node it reaches)."""
    trips = RoundTrips()

    class _Counting(redis.Connection):
        def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            trips.count += 1
            super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]

    if redis_target == "cluster":
        return cast(redis.Redis, RedisCluster.from_url(redis_url, connection_class=_Counting)), trips
    return redis.Redis(connection_pool=redis.ConnectionPool.from_url(redis_url, connection_class=_Counting)), trips


def test_the_viewers_of_a_change_are_chosen_in_one_round_trip_for_them_all(
    redis_client: redis.Redis, redis_url: str, redis_target: str
) -> None:
    client, trips = _counting(redis_url, redis_target)
    with running_bot(client) as bot:
        bot.slack.set_channel_members(CHANNEL, [REQUESTER, APPROVER, SECOND_APPROVER, "U0THIRD", "U0LEAD", "U0BOT"])
        approval_id, session_id = bot.ask()
        approval = bot.services.stores.approvals.get(session_id, approval_id)
        assert approval is not None
        home_queue, viewers = bot.services.home_queue, bot.services.stores.home_viewers

        def chosen() -> tuple[list[str], int]:
            before = trips.count
            return sorted(home_queue.viewers_of(approval)), trips.count - before

        viewers.add(TEAM, APPROVER)
        assert chosen()[0] == [APPROVER]  # the channel's members are cached now
        one = chosen()[1]
        for person in (SECOND_APPROVER, OUTSIDER, "U0THIRD", "U0LEAD"):
            viewers.add(TEAM, person)
        many, cost = chosen()
        assert many == sorted([APPROVER, SECOND_APPROVER, "U0THIRD", "U0LEAD"])  # not OUTSIDER: not in the channel
        assert cost == one


@pytest.mark.single_redis  # counted with MONITOR, which watches one server (a cluster has one per master)
def test_a_tab_reads_each_request_it_lists_once(redis_client: redis.Redis) -> None:
    with _bot(redis_client) as (bot, _clock):
        asked = [bot.ask(f"restart checkout {index}") for index in range(3)]
        bot.services.home_queue.contents_for(APPROVER, team_id=TEAM)  # the channel's members are cached now
        with commands_sent(redis_client) as commands:
            home = bot.services.home_queue.contents_for(APPROVER, team_id=TEAM)
        assert sorted(request.approval_id for request, _progress in home.queue) == sorted(aid for aid, _ in asked)
        for approval_id, session_id in asked:  # listed by the channel's page and by the workspace's
            assert commands.count(f"HGETALL {keys.approval(session_id, approval_id)}") == 1
