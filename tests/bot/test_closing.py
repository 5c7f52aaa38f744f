"""A bot that was left ends the threads it started: a test run's bots would otherwise keep theirs (and every object
they hold) until a full garbage collection, which then stops the whole process for seconds."""

import threading

import pytest
import redis

from tests.bot.support.harness import demo_factory, running_bot

_OWN_THREADS = ("shard", "outbox-lane")
"""The prefixes of the threads the bot's queues read shards on and its deliverer runs lanes on."""


@pytest.mark.parametrize("redis_target", ["cluster"], indirect=True)  # on one server, neither kind is started
def test_a_bot_left_ends_its_shard_and_lane_threads(redis_client: redis.Redis) -> None:
    before = set(threading.enumerate())
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        bot.ask()
        started = [thread for thread in set(threading.enumerate()) - before if thread.name.startswith(_OWN_THREADS)]
    assert started  # the bot did start some: the test sees what it checks
    for thread in started:
        thread.join(timeout=2)
        assert not thread.is_alive(), thread.name
