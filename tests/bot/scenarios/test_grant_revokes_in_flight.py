"""A revoke and the calls its grant is deciding at that moment (issue #42): once a revoke has returned, a call whose
decision by the grant was not written yet is asked of people and never runs; one decided before it runs. Each race
is placed by hand: the revoke runs inside the step it races (a seam around the real store or publisher)."""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.cli import grants as grants_command
from bot.domain.clock import ManualClock
from bot.domain.grants import Grant, ListedGrant
from bot.render import action_ids as ids
from bot.store import keys, scripts
from bot.store.access import grants as grant_records
from bot.store.access.grants import GrantStore, Revoked
from loopback_slack import slack_requests
from tests.agent.support import WorkerDied
from tests.bot.support.grant_clicks import approve_and_allow, grant_buttons
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot, take_over
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
    [(grant, *_)] = bot.services.grant_flow.live_for(APPROVER, team_id=TEAM)
    return grant


def _runs(bot: Bot) -> int:
    return bot.texts_posted().count(RAN)


def _revoke(bot: Bot, grant: Grant) -> Grant | None:
    """The Revoke button on App Home, as its listener calls it: returned means acknowledged to the person as done."""
    revoked = bot.services.grant_flow.revoke_as(grant.team_id, grant.channel_id, grant.grant_id, user_id=APPROVER)
    return revoked.grant if revoked is not None and revoked.finished else None


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
    take_over(bot.services.worker(claim_idle_ms=0))  # another worker takes the job over
    bot.drain()
    assert is_decided(bot.approval_messages()[-1]) is not revoked
    assert _runs(bot) == runs + (not revoked)
    assert _in_flight(bot) == 0
    if not revoked:
        assert bot.services.grant_flow.live_for(APPROVER, team_id=TEAM) == [ListedGrant(grant, 1)]


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
    take_over(bot.services.worker(claim_idle_ms=0))
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


def _fences_fail(*_args: Any, **_kwargs: Any) -> str:
    """The fences' write failing: on a cluster, the session's master (another than the grant's) failing over."""
    raise redis.ConnectionError("Error 111 connecting: Connection refused")


def _revoke_unfenced(bot: Bot, monkeypatch: pytest.MonkeyPatch, grant: Grant) -> Revoked | None:
    """A revoke whose first step is done and whose fences cannot be written: it says so instead of failing."""
    with monkeypatch.context() as patched:
        patched.setattr(keys, "grant_revoked", _fences_fail)
        return bot.services.grant_flow.revoke_as(TEAM, CHANNEL, grant.grant_id, user_id=APPROVER)


def test_a_revoke_that_cannot_fence_stays_listed_as_owed_and_the_operators_retry_finishes_it(
    bot: Bot, monkeypatch: pytest.MonkeyPatch, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reviewed (wt-review): the grant was deleted, its use in flight unfenced, and every listing then dropped it, so
    nothing could finish the revoke; the CLI's retry said "no live standing approval" (exit 1) after fencing. Issue #42:
    the listings showed it as an ordinary live grant; they now say its revoke is not finished."""
    grant = _granted(bot)
    runs = _runs(bot)
    store = bot.services.publisher.grants
    seen: dict[str, Any] = {}

    def revoke_unfenced_then_look_and_retry() -> None:
        seen["revoked"] = _revoke_unfenced(bot, monkeypatch, grant)
        with monkeypatch.context() as patched:  # still down: listings keep the grant, being revoked
            patched.setattr(keys, "grant_revoked", _fences_fail)
            seen["app_home"] = bot.services.grant_flow.live_for(APPROVER, team_id=TEAM)
            seen["listed"] = store.live(now_ms=0)  # what `python -m bot grants` runs
        seen["place"] = store.place_of(grant.grant_id)
        monkeypatch.setenv("REDIS_URL", redis_url)
        seen["cli"] = grants_command.main(["revoke", grant.grant_id])  # up again: the operator's retry

    _after_each_use(bot, monkeypatch, revoke_unfenced_then_look_and_retry)
    asked = _ask(bot)
    monkeypatch.undo()
    assert seen["revoked"] == Revoked(grant, ended_now=True, finished=False)
    assert [(listed, revoking) for listed, _uses, revoking in seen["app_home"]] == [(grant, True)]  # its Revoke stays
    assert [(listed, revoking) for listed, _uses, revoking in seen["listed"]] == [(grant, True)]
    assert grants_command.listing_line(seen["listed"][0]).endswith(
        "\trevoking… (not finished: revoke it again, or the bot finishes it)"
    )
    assert seen["place"] == (TEAM, CHANNEL)
    assert seen["cli"] == 0
    assert capsys.readouterr().out == f"revoked: {grant.grant_id} (restart_service in {CHANNEL})\n"
    assert not is_decided(asked), "the revoke was finished before the grant's decision"
    assert _runs(bot) == runs
    assert bot.services.grant_flow.live_for(APPROVER, team_id=TEAM) == []
    audited = [entry.event for entry in bot.services.stores.audit.entries() if entry.event.startswith("grant_rev")]
    assert audited == ["grant_revoked"]  # ended once


def test_the_next_app_home_listing_finishes_an_owed_revoke_before_the_grant_decides(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    grant = _granted(bot)
    runs = _runs(bot)
    seen: dict[str, Any] = {}

    def revoke_unfenced_then_app_home() -> None:
        seen["revoked"] = _revoke_unfenced(bot, monkeypatch, grant)
        seen["app_home"] = bot.services.grant_flow.live_for(APPROVER, team_id=TEAM)

    _after_each_use(bot, monkeypatch, revoke_unfenced_then_app_home)
    asked = _ask(bot)
    monkeypatch.undo()
    assert seen == {"revoked": Revoked(grant, ended_now=True, finished=False), "app_home": []}  # finished, gone
    assert not is_decided(asked)
    assert _runs(bot) == runs
    assert bot.services.publisher.grants.place_of(grant.grant_id) is None


def test_a_person_whose_revoke_could_not_fence_is_told_it_is_not_finished(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never "Revoked" while a call it was deciding may still be decided by it; the App Home refresh finishes it."""
    grant = _granted(bot)
    clicked: list[int] = []

    def click_revoke_unfenced() -> None:
        click = slack_requests.block_actions(
            action_id=ids.REVOKE_GRANT_ACTION, user_id=APPROVER, channel_id=CHANNEL, message_ts="0",
            value=ids.revoke_button_value(TEAM, CHANNEL, grant.grant_id),
        )  # fmt: skip
        for key in ("channel", "message"):
            click.pop(key, None)
        click["container"] = {"type": "view", "view_id": "V0HOME"}
        with monkeypatch.context() as patched:
            patched.setattr(keys, "grant_revoked", _fences_fail)
            clicked.append(bot.poster.post_action(click).status)

    _after_each_use(bot, monkeypatch, click_revoke_unfenced)
    _ask(bot)
    monkeypatch.undo()
    assert clicked == [200]
    told = [text[: len("Not revoked yet")] for text in bot.texts_posted() if "revoked" in text.lower()]
    assert told == ["Not revoked yet"]
    assert bot.services.publisher.grants.place_of(grant.grant_id) is None  # App Home's refresh finished it


def test_a_use_in_flight_is_listed_only_while_it_may_decide(bot: Bot) -> None:
    """Reviewed (wt-review): uses were listed with score 0 and the list's day of TTL pushed back by every use, so a
    step that died after its use and was never published again stayed listed for ever. Each is now listed by the
    time of its use, and the next use drops those too old to decide anything."""
    grant = _granted(bot)
    redis_client = bot.services.stores.redis
    in_flight = keys.grant_in_flight(TEAM, CHANNEL)
    redis_client.zadd(in_flight, {f"{grant.grant_id}:T0TEAM:C0OPS:1.000001:dead0approval": 0})  # a died step's
    _ask(bot)  # any later use of any grant of the channel (decided, and its own member removed)
    assert redis_client.exists(in_flight) == 0  # emptied, so gone (a member's TTL: as long as it may decide)


@pytest.mark.single_redis  # WAIT on a server without replicas: acknowledged by none
def test_a_revoke_waits_for_the_decision_replicas_and_is_not_finished_without_them(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failover right after an acknowledged revoke must not lose its fences (``REDIS_DECISION_REPLICAS``)."""
    grant = _granted(bot)
    redis_client = bot.services.stores.redis
    for script in (scripts.REVOKE_GRANT, scripts.FENCE_GRANT_USES):
        redis_client.script_load(script.text)  # a script not loaded yet is sent again, with its WAIT
    waited = _commands(redis_client, "wait")
    unreplicated = GrantStore(redis_client, replicas=1)
    seen: list[Revoked | None] = []
    _after_each_use(bot, monkeypatch, lambda: seen.append(unreplicated.revoke(TEAM, CHANNEL, grant.grant_id)))
    asked = _ask(bot)
    monkeypatch.undo()
    assert seen == [Revoked(grant, ended_now=True, finished=False)]  # no replica holds it: not told finished
    assert _commands(redis_client, "wait") == waited + 2  # the first step's, and the fences'
    assert not is_decided(asked)  # the fences stand on the master all the same
    assert unreplicated.place_of(grant.grant_id) == (TEAM, CHANNEL)  # owed: listed until a revoke is held
    assert GrantStore(redis_client).revoke(TEAM, CHANNEL, grant.grant_id) == Revoked(grant, False, True)
    assert unreplicated.place_of(grant.grant_id) is None


def _commands(redis_client: redis.Redis, name: str) -> int:
    stats: dict[str, Any] = redis_client.info("commandstats")
    return int(stats.get(f"cmdstat_{name}", {}).get("calls", 0))


def test_a_round_published_again_counts_no_use_of_a_grant_made_since_it_opened(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round was asked of people; "Approve + allow" on it made a grant; a second publisher of the same round (one
    that read the round before the first one's transaction: an API request asked again) must count no use of that
    grant: it decides nothing there."""
    publisher = bot.services.publisher
    publish = publisher.publish
    published: list[tuple[Any, Any]] = []

    def kept(*args: Any, **kwargs: Any) -> None:
        published.append((args, kwargs))
        publish(*args, **kwargs)

    monkeypatch.setattr(publisher, "publish", kept)
    _ask(bot)
    monkeypatch.undo()
    [button] = grant_buttons(bot.approval_messages()[-1])
    approve_and_allow(bot, button["value"], user=APPROVER)  # the grant is made; the agent not resumed yet
    [(args, kwargs)] = published
    publisher.publish(*args, **kwargs)  # the same round again
    [(_grant, uses, _revoking)] = bot.services.grant_flow.live_for(APPROVER, team_id=TEAM)
    assert uses == 0
    assert _in_flight(bot) == 0
    bot.drain()


def test_a_worker_finishes_an_owed_revoke_nobody_lists_or_tries_again(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    grant = _granted(bot)
    runs = _runs(bot)
    finished: list[int] = []
    monkeypatch.setattr(grant_records, "_OWED_RETRY_MS", 0)  # the worker's next try is due at once

    def revoke_unfenced_then_a_worker_tick() -> None:
        _revoke_unfenced(bot, monkeypatch, grant)
        finished.append(bot.worker.finish_revokes())

    _after_each_use(bot, monkeypatch, revoke_unfenced_then_a_worker_tick)
    asked = _ask(bot)
    monkeypatch.undo()
    assert finished == [1]
    assert not is_decided(asked)
    assert _runs(bot) == runs
    assert bot.services.publisher.grants.place_of(grant.grant_id) is None
    assert bot.worker.finish_revokes() == 0  # nothing owed any more


def test_the_operators_revoke_that_cannot_fence_says_so_and_exits_3(
    bot: Bot, monkeypatch: pytest.MonkeyPatch, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    grant = _granted(bot)
    exits: list[int] = []

    def cli_revoke_unfenced() -> None:
        monkeypatch.setenv("REDIS_URL", redis_url)
        with monkeypatch.context() as patched:
            patched.setattr(keys, "grant_revoked", _fences_fail)
            exits.append(grants_command.main(["revoke", grant.grant_id]))

    _after_each_use(bot, monkeypatch, cli_revoke_unfenced)
    _ask(bot)
    monkeypatch.undo()
    printed = capsys.readouterr()
    assert exits == [3]
    assert (printed.out, printed.err.startswith(f"signoff: not revoked yet: {grant.grant_id} (")) == ("", True)
