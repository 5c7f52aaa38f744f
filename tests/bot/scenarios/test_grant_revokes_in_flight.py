"""A revoke and the calls its grant is deciding at that moment (issue #42): once a revoke has returned, a call whose
decision by the grant was not written yet is asked of people and never runs; one decided before it runs. Each race
is placed by hand: the revoke runs inside the step it races (a seam around the real store or publisher)."""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.domain.clock import ManualClock
from bot.domain.grants import Grant
from bot.render import action_ids as ids
from bot.store import keys
from bot.store.access import grants as grant_records
from tests.agent.support import WorkerDied
from tests.bot.support.grant_clicks import approve_and_allow, grant_buttons
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, TEAM
from tests.bot.support.policy_files import write

POLICY = """\
rules:
  - name: restarts
    match: {tools: [restart_service]}
    grants: {durations: [1h]}
"""
RAN = "checkout: 3 replicas restarted"  # what the demo agent says once the tool ran


@pytest.fixture
def bot(redis_client: redis.Redis, tmp_path: Path) -> Iterator[Bot]:
    policy = write(tmp_path, POLICY)
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=ManualClock()) as running:
        yield running


def _ask(bot: Bot) -> dict[str, Any]:
    bot.mention("restart checkout")
    bot.drain()
    return bot.approval_messages()[-1]


def _granted(bot: Bot) -> Grant:
    """Approve + allow 1 h on a first call: the grant that covers the same call from now on."""
    _ask(bot)
    [button] = grant_buttons(bot.approval_messages()[-1])
    approve_and_allow(bot, button["value"], user=APPROVER)
    bot.drain()
    [(grant, _uses)] = bot.services.grant_flow.live_for(APPROVER, team_id=TEAM)
    return grant


def _runs(bot: Bot) -> int:
    return bot.texts_posted().count(RAN)


def _revoke(bot: Bot, grant: Grant) -> Grant | None:
    """The Revoke button on App Home, as its listener calls it: returned means acknowledged to the person."""
    return bot.services.grant_flow.revoke_as(grant.team_id, grant.channel_id, grant.grant_id, user_id=APPROVER)


def _after_each_use(bot: Bot, monkeypatch: pytest.MonkeyPatch, then: Callable[[], object]) -> None:
    """Run ``then`` right after each real use of a grant by the publisher, before the call's decision is written."""
    store = bot.services.publisher.grants
    use = store.use

    def use_then(*args: Any, **kwargs: Any) -> Any:
        found = use(*args, **kwargs)
        assert found is not None, "the grant covers the call"
        then()
        return found

    monkeypatch.setattr(store, "use", use_then)


def _in_flight(bot: Bot) -> int:
    return int(bot.services.stores.redis.zcard(keys.grant_in_flight(TEAM, CHANNEL)))


def test_a_revoke_between_the_grants_use_and_its_decision_stops_the_call_and_asks_people(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    grant = _granted(bot)
    runs = _runs(bot)
    revoked: list[Grant | None] = []
    _after_each_use(bot, monkeypatch, lambda: revoked.append(_revoke(bot, grant)))
    asked = _ask(bot)
    assert revoked == [grant]  # acknowledged before the publish wrote the call's decision
    monkeypatch.undo()
    assert not is_decided(asked), "the revoke came before the decision: people are asked"
    assert _runs(bot) == runs, "the tool never runs on a revoked grant's word"
    refused = [entry for entry in bot.services.stores.audit.entries() if entry.event == "grant_use_refused"]
    assert [(entry.details["grant"], entry.details["why"]) for entry in refused] == [(grant.grant_id, "revoked")]
    assert _in_flight(bot) == 0

    # An ordinary request: a person's approval runs it, once.
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER).status == 200
    bot.drain()
    assert _runs(bot) == runs + 1


def test_a_revoke_once_the_grants_decision_is_written_lets_that_call_run(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decided before the revoke: the call runs (the agent resumes after the revoke), the next one is asked."""
    grant = _granted(bot)
    runs = _runs(bot)
    publisher = bot.services.publisher
    publish = publisher.publish
    revoked: list[Grant | None] = []

    def publish_then_revoke(*args: Any, **kwargs: Any) -> None:
        publish(*args, **kwargs)
        if not revoked:  # right after the round's transaction, before the worker resumes the agent
            revoked.append(_revoke(bot, grant))

    monkeypatch.setattr(publisher, "publish", publish_then_revoke)
    asked = _ask(bot)
    monkeypatch.undo()
    assert revoked == [grant]
    assert is_decided(asked)
    assert _runs(bot) == runs + 1
    assert not is_decided(_ask(bot))
    assert _runs(bot) == runs + 1


@pytest.mark.parametrize("revoked", [False, True], ids=["kept", "revoked-meanwhile"])
def test_a_worker_killed_after_the_use_before_the_decision(
    bot: Bot, monkeypatch: pytest.MonkeyPatch, revoked: bool
) -> None:
    """The step is taken over: covered once (one use counted), or asked if the grant was revoked meanwhile."""
    grant = _granted(bot)
    runs = _runs(bot)

    def die() -> None:
        raise WorkerDied

    _after_each_use(bot, monkeypatch, die)
    bot.mention("restart checkout")
    with pytest.raises(WorkerDied):
        bot.drain()
    monkeypatch.undo()
    if revoked:
        assert _revoke(bot, grant) == grant
    bot.services.worker(claim_idle_ms=0).run_jobs_once(block_ms=1)  # another worker takes the job over
    bot.drain()
    assert is_decided(bot.approval_messages()[-1]) is not revoked
    assert _runs(bot) == runs + (not revoked)
    assert _in_flight(bot) == 0
    if not revoked:
        assert bot.services.grant_flow.live_for(APPROVER, team_id=TEAM) == [(grant, 1)]


def test_a_worker_killed_after_the_decision_before_the_use_leaves_the_in_flight_list(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The call decided by the grant runs once; a revoke afterwards fences only a decided call, harmless."""
    grant = _granted(bot)
    runs = _runs(bot)
    store = bot.services.publisher.grants

    def die(*_args: Any, **_kwargs: Any) -> None:
        raise WorkerDied

    monkeypatch.setattr(store, "decided", die)
    bot.mention("restart checkout")
    with pytest.raises(WorkerDied):
        bot.drain()
    monkeypatch.undo()
    assert _in_flight(bot) == 1
    bot.services.worker(claim_idle_ms=0).run_jobs_once(block_ms=1)
    bot.drain()
    assert is_decided(bot.approval_messages()[-1])
    assert _runs(bot) == runs + 1
    assert _revoke(bot, grant) == grant
    assert _in_flight(bot) == 0
    bot.drain()
    assert _runs(bot) == runs + 1
    assert not is_decided(_ask(bot))


def test_a_revoke_that_died_half_way_finishes_when_tried_again(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its first step done by hand (the grant deleted, its uses in flight not fenced): tried again, it fences them."""
    grant = _granted(bot)
    runs = _runs(bot)
    tried_again: list[Grant | None] = []

    def half_revoke_then_again() -> None:
        bot.services.stores.redis.hdel(keys.grants(TEAM, CHANNEL), grant.grant_id, f"{grant.grant_id}:uses")
        tried_again.append(_revoke(bot, grant))

    _after_each_use(bot, monkeypatch, half_revoke_then_again)
    asked = _ask(bot)
    assert tried_again == [None]  # the grant was gone already
    monkeypatch.undo()
    assert not is_decided(asked)
    assert _runs(bot) == runs


def test_a_use_too_old_to_decide_leaves_the_call_to_people(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A step stalled past the bound after the use (here: a bound already past) writes no decision by the grant."""
    grant = _granted(bot)
    runs = _runs(bot)
    monkeypatch.setattr(grant_records, "DECIDES_WITHIN_MS", -1)
    asked = _ask(bot)
    assert not is_decided(asked)
    assert _runs(bot) == runs
    refused = [entry for entry in bot.services.stores.audit.entries() if entry.event == "grant_use_refused"]
    assert [(entry.details["grant"], entry.details["why"]) for entry in refused] == [(grant.grant_id, "too_late")]


def _publish_round_trips(bot: Bot, monkeypatch: pytest.MonkeyPatch, text: str) -> int:
    """Round trips of the publish that opens the round a mention of ``text`` asks for."""
    publisher, send = bot.services.publisher, redis.Connection.send_packed_command
    publish = publisher.publish
    counted: list[int] = []
    trips = [0]

    def counting(self: redis.Connection, *args: Any, **kwargs: Any) -> None:
        trips[0] += 1
        send(self, *args, **kwargs)  # type: ignore[no-untyped-call]

    def measured(*args: Any, **kwargs: Any) -> None:
        if counted:
            return publish(*args, **kwargs)
        with monkeypatch.context() as patched:
            patched.setattr(redis.Connection, "send_packed_command", counting)
            publish(*args, **kwargs)
        counted.append(trips[0])
        return None

    with monkeypatch.context() as patched:
        patched.setattr(publisher, "publish", measured)
        bot.mention(text)
        bot.drain()
    return counted[0]


@pytest.mark.single_redis  # counts round trips to one server
def test_a_call_a_grant_covers_costs_its_publish_one_round_trip_more_than_one_asked(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both look for a grant; the covered one's use then leaves the in-flight list (its decision is in the same
    transaction as the round either way)."""
    _granted(bot)
    covered = _publish_round_trips(bot, monkeypatch, "restart checkout")
    asked = _publish_round_trips(bot, monkeypatch, "restart search")  # the same rule, another input: no grant
    assert is_decided(bot.approval_messages()[-2])
    assert not is_decided(bot.approval_messages()[-1])
    assert covered == asked + 1
