"""A master of the cluster dies: while its replica takes over, a click on a request of its shard is told it was
not recorded (nothing half-written); once the replica serves the slot the bot carries on by itself, nothing
that was acknowledged before the crash is lost, and the approved call runs once."""

import time
from collections.abc import Iterator

import pytest
from redis.crc import key_slot

from bot.render import action_ids as ids
from bot.services import connect_redis
from state.redis_cluster import RedisClusterServers
from state.store import keys_for
from tests.bot.support.harness import demo_factory, running_bot
from tests.bot.support.lost_clicks import assert_it_wrote_nothing_and_the_next_click_decides, ephemeral_answers
from tests.bot.support.people import APPROVER


@pytest.fixture
def cluster_with_replicas() -> Iterator[RedisClusterServers]:
    """3 masters with a replica each, private to the test (it kills one)."""
    with RedisClusterServers(masters=3, replicas=1) as cluster:
        yield cluster


def test_a_master_dies_the_replica_takes_over_and_the_bot_recovers_by_itself(
    cluster_with_replicas: RedisClusterServers,
) -> None:
    cluster = cluster_with_replicas
    # The bot's own client; its retry budget (0.3 s) is shorter than a failover (about 2 s here).
    client = connect_redis(cluster.url, retry_s=0.3)
    with running_bot(client, agent_factory=demo_factory) as bot:
        approval_id, session_id = bot.ask()
        slot = key_slot(keys_for(session_id).session.encode())
        master = cluster.master_of_slot(slot)
        # Replication is asynchronous: wait until the replica has every write the bot was told succeeded.
        on_master = client.get_node_from_key(keys_for(session_id).session)  # type: ignore[attr-defined]
        assert client.wait(1, 5000, target_nodes=on_master) == 1
        master.kill()
        killed_at = time.monotonic()

        during = bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
        assert during.status == 200
        [told] = bot.slack.wait_for("response_url")
        # Told by the edge (its replay check hit the dead master) or by the click's listener (the decision did).
        assert "not recorded" in told.args["text"].lower()
        assert "try again" in told.args["text"]

        replica = cluster.wait_served(slot)
        took_over_s = time.monotonic() - killed_at
        assert replica is not master
        print(f"replica took over slot {slot} in {took_over_s:.1f} s")

        # Nothing acknowledged before the crash is lost, and the click during the failover wrote nothing.
        assert bot.services.stores.sessions.interrupted_sessions() == [session_id]
        assert_it_wrote_nothing_and_the_next_click_decides(bot, approval_id)
        assert bot.texts_posted().count("checkout: 3 replicas restarted") == 1
        assert len(ephemeral_answers(bot)) == 1
