"""Standing approvals, end to end over real HTTP against the loopback Slack: "Approve + allow 1 h" approves and
makes a grant; while it lives the very same call (tool, input, channel, requester) runs without asking, posted
decided and audited; anything else is asked; it ends by itself, and a Revoke on App Home stops the next call."""

import json
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.domain.clock import ManualClock, epoch_ms, system_clock
from bot.domain.grants import Grant, call_digest, field_digests, pattern_key
from bot.render import action_ids as ids
from bot.render.texts import standing_approvals
from bot.store.access.grants import Call, GrantStore, GrantUse, Revoked
from loopback_slack import slack_requests
from tests.bot.support.grant_clicks import approve_and_allow, grant_buttons
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, OUTSIDER, REQUESTER, TEAM
from tests.bot.support.policy_files import write
from tests.bot.support.processes import run_bot

POLICY = """\
rules:
  - name: restarts
    match: {tools: [restart_service]}
    grants: {durations: [15m, 1h]}
"""


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def bot(redis_client: redis.Redis, tmp_path: Path, clock: ManualClock) -> Iterator[Bot]:
    policy = write(tmp_path, POLICY)
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as running:
        yield running


def _grant_button(message: dict[str, Any], seconds: int) -> dict[str, Any]:
    [button] = [button for button in grant_buttons(message) if button["value"].startswith(f"{seconds}~")]
    return dict(button)


def _approve_and_allow(bot: Bot, seconds: int, *, user: str = APPROVER, value: str | None = None) -> None:
    approve_and_allow(bot, value or _grant_button(bot.approval_messages()[-1], seconds)["value"], user=user)
    bot.drain()


def _ask(bot: Bot, text: str = "restart checkout", *, user: str = REQUESTER) -> dict[str, Any]:
    bot.mention(text, user=user)
    bot.drain()
    return bot.approval_messages()[-1]


def test_approve_and_allow_shows_the_scope_then_the_same_call_runs_without_asking(bot: Bot) -> None:
    first = _ask(bot)
    hour = _grant_button(first, 3600)
    assert hour["text"]["text"] == "Approve + allow 1 h"
    assert _grant_button(first, 900)["text"]["text"] == "Approve + allow 15 min"
    scope = hour["confirm"]["text"]["text"]
    assert "for 1 h run `restart_service` with exactly these arguments in <#C0OPS>, asked by <@U0REQUESTER>" in scope
    assert len(scope) <= 300

    _approve_and_allow(bot, 3600)
    assert bot.thread_texts(str(first["thread_ts"]))[-1] == "checkout: 3 replicas restarted"
    assert "now runs here without asking until" in bot.ephemeral_texts(APPROVER)[-1]

    again = _ask(bot)
    assert again["ts"] != first["ts"]
    assert is_decided(again), "a covered call is posted decided, never with buttons"
    assert "standing approval" in json.dumps(again["blocks"])
    assert bot.thread_texts(str(again["thread_ts"]))[-1] == "checkout: 3 replicas restarted"
    used = [entry for entry in bot.services.stores.audit.entries() if entry.details.get("source") == "grant"]
    assert [(entry.event, entry.actor) for entry in used] == [("decision", APPROVER)]

    # Not the same call: another input, another requester.
    assert not is_decided(_ask(bot, "restart search"))
    assert not is_decided(_ask(bot, user=OUTSIDER))


def test_a_grant_ends_by_itself_never_later_than_chosen(bot: Bot, clock: ManualClock) -> None:
    _ask(bot)
    _approve_and_allow(bot, 900)
    clock.advance(899)
    assert is_decided(_ask(bot))
    clock.advance(2)
    assert not is_decided(_ask(bot))


def test_a_duration_the_rule_does_not_offer_records_nothing(bot: Bot) -> None:
    message = _ask(bot)
    value = _grant_button(message, 3600)["value"].replace("3600~", "999999~", 1)
    _approve_and_allow(bot, 3600, value=value)
    assert not is_decided(bot.approval_messages()[-1])
    assert "offers no standing approval for that long" in bot.ephemeral_texts(APPROVER)[-1]
    assert bot.services.stores.grants.live(now_ms=epoch_ms(bot.services.clock())) == []


def test_someone_who_may_not_approve_makes_no_grant(bot: Bot) -> None:
    _ask(bot)
    _approve_and_allow(bot, 3600, user=REQUESTER)  # no self-approval under this rule
    assert not is_decided(bot.approval_messages()[-1])
    assert bot.services.stores.grants.live(now_ms=epoch_ms(bot.services.clock())) == []


def test_revoke_on_app_home_stops_the_next_call(bot: Bot) -> None:
    _ask(bot)
    _approve_and_allow(bot, 3600)
    home = _home(bot, APPROVER)
    [entry] = [
        block for block in home["blocks"] if block.get("accessory", {}).get("action_id") == ids.REVOKE_GRANT_ACTION
    ]
    assert "`restart_service`" in entry["text"]["text"]
    assert "used 0 times" in entry["text"]["text"]

    click = slack_requests.block_actions(
        action_id=ids.REVOKE_GRANT_ACTION, user_id=APPROVER, channel_id=CHANNEL, message_ts="0",
        value=entry["accessory"]["value"],
    )  # fmt: skip
    for key in ("channel", "message"):
        click.pop(key, None)
    click["container"] = {"type": "view", "view_id": "V0HOME"}
    assert bot.poster.post_action(click).status == 200
    bot.drain()
    assert not is_decided(_ask(bot))
    assert [entry.event for entry in bot.services.stores.audit.entries() if entry.event.startswith("grant")] == [
        "grant",
        "grant_revoked",
    ]


def _home(bot: Bot, user: str) -> dict[str, Any]:
    before = len(bot.slack.calls("views.publish"))
    event = {"type": "app_home_opened", "user": user, "channel": f"D{user}", "tab": "home"}
    assert bot.poster.post_event(slack_requests.event_callback(event)).status == 200
    bot.drain()
    return dict(bot.slack.calls("views.publish")[before:][-1].args["view"])


def _grant(now: datetime) -> Grant:
    return Grant(
        grant_id="g1",
        team_id="T0TEST",
        channel_id=CHANNEL,
        rule="restarts",
        tool="restart_service",
        tool_input={"service": "checkout"},
        digest=call_digest("restart_service", {"service": "checkout"}, client=None),
        terms="deciders-v1",
        requester=REQUESTER,
        granted_by=APPROVER,
        granted_at=now,
        expires_at=now + timedelta(hours=1),
        granted_ms=epoch_ms(now),
        approval_id="a1",
    )


@pytest.mark.parametrize("picked", [False, True], ids=["exact-call", "picked-fields"])
def test_a_revoke_racing_calls_stops_every_call_that_starts_after_it(redis_client: redis.Redis, picked: bool) -> None:
    """Many workers use one grant while it is revoked: none that starts once the revoke returned is covered."""
    store = GrantStore(redis_client)
    now = ManualClock()()
    grant = _grant(now)
    asked = {"service": "checkout", "force": True}  # with a field the grant on picked fields leaves free
    if picked:
        update = {
            "fields": {"service": field_digests("restart_service", asked, client=None)["service"]},
            "pattern": pattern_key("restart_service", client=None),
        }
        grant = grant.model_copy(update=update)
    store.create(grant)
    call = Call(
        "T0TEST", CHANNEL, grant.digest if not picked else call_digest("restart_service", asked, client=None),
        "restarts", REQUESTER, self_approval=False, terms="deciders-v1", longest_ms=3_600_000,
        pattern=pattern_key("restart_service", client=None),
        fields=field_digests("restart_service", asked, client=None),
    )  # fmt: skip
    offset = epoch_ms(now) - epoch_ms(system_clock())  # the test's clock, as the bot's publisher passes it
    assert _grant_of(store.use(call, session_id="s1", approval_id="a-first", clock_offset_ms=offset)) == grant
    revoked_at: list[float] = []
    late_uses: list[float] = []
    stop = threading.Event()

    def use_until_stopped() -> None:
        while not stop.is_set():
            started = time.monotonic()
            covered = store.use(call, session_id="s1", approval_id=uuid.uuid4().hex, clock_offset_ms=offset) is not None
            if covered and revoked_at and started > revoked_at[0]:
                late_uses.append(started)

    workers = [threading.Thread(target=use_until_stopped) for _ in range(4)]
    for worker in workers:
        worker.start()
    time.sleep(0.2)
    assert store.revoke("T0TEST", CHANNEL, "g1") == Revoked(grant, ended_now=True, finished=True)
    revoked_at.append(time.monotonic())
    time.sleep(0.2)
    stop.set()
    for worker in workers:
        worker.join(10)
    assert late_uses == []
    assert store.use(call, session_id="s1", approval_id="a-last", clock_offset_ms=offset) is None
    assert store.live(now_ms=epoch_ms(now)) == []


def _grant_of(use: GrantUse | None) -> Grant | None:
    return use.grant if use is not None else None


def _exact_call(grant: Grant) -> Call:
    return Call(
        "T0TEST", CHANNEL, grant.digest, "restarts", REQUESTER, self_approval=False, terms="deciders-v1",
        longest_ms=3_600_000,
    )  # fmt: skip


def test_a_call_asked_again_in_the_same_approval_counts_one_use(redis_client: redis.Redis) -> None:
    """A publish tried again (its worker died after the grant was used) does not count the grant's use twice."""
    store = GrantStore(redis_client)
    grant = _grant(store.now())
    store.create(grant)
    for approval_id in ("a-retried", "a-retried", "a-other"):
        assert _grant_of(store.use(_exact_call(grant), session_id="s1", approval_id=approval_id)) == grant
    [(listed, uses, _revoking)] = store.live(now_ms=epoch_ms(store.now()))
    assert listed == grant
    assert uses == 2


def test_a_grants_expiry_is_judged_by_redis_time_moved_only_by_a_moved_clock(redis_client: redis.Redis) -> None:
    store = GrantStore(redis_client)
    made = store.now()
    assert abs((made - system_clock()).total_seconds()) < 1  # Redis' TIME: one host here, one clock
    grant = _grant(made)
    store.create(grant)
    assert _grant_of(store.use(_exact_call(grant), session_id="s1", approval_id="a-now")) == grant
    hour_and_a_minute = 3_660_000
    later = store.use(_exact_call(grant), session_id="s1", approval_id="a-later", clock_offset_ms=hour_and_a_minute)
    assert later is None
    assert store.now(clock_offset_ms=hour_and_a_minute) - made > timedelta(hours=1)


@pytest.mark.single_redis  # the command connects as an operator does, to one server
def test_operators_list_and_revoke_grants_from_the_command_line(redis_client: redis.Redis, redis_url: str) -> None:
    store = GrantStore(redis_client)
    grant = _grant(datetime.now(UTC))
    store.create(grant)
    listed = run_bot(["grants"], REDIS_URL=redis_url)
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    assert line.startswith(
        'g1\trestart_service {"service": "checkout"}\tin T0TEST/C0OPS for U0REQUESTER\tby U0APPROVER'
    )
    assert line.endswith("\tused 0")
    revoked = run_bot(["grants", "revoke", "g1"], REDIS_URL=redis_url)
    assert (revoked.returncode, revoked.stdout) == (0, "revoked: g1 (restart_service in C0OPS)\n")
    assert store.get("T0TEST", CHANNEL, "g1") is None
    again = run_bot(["grants", "revoke", "g1"], REDIS_URL=redis_url)
    assert again.returncode == 1
    assert "no live standing approval 'g1'" in again.stderr
    assert run_bot(["grants"]).returncode == 2  # no REDIS_URL: one message, no traceback


def test_a_rule_can_let_a_grant_cover_anyone_in_the_channel_but_never_its_maker(
    redis_client: redis.Redis, tmp_path: Path, clock: ManualClock
) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        POLICY.replace("grants: {durations: [15m, 1h]}", "grants: {durations: [15m, 1h], scope: channel}")
    )
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as bot:
        bot.ask("restart checkout")
        confirm = _grant_button(bot.approval_messages()[-1], 3600)["confirm"]["text"]["text"]
        assert "asked by anyone" in confirm
        _approve_and_allow(bot, 3600)
        bot.drain()
        [(grant, *_)] = bot.services.grant_flow.live_for(APPROVER, team_id=TEAM)
        assert grant.requester is None  # anyone's call in the channel

        bot.mention("restart checkout", user=OUTSIDER)  # someone else asks the very same call: covered
        bot.drain()
        assert is_decided(bot.approval_messages()[-1])

        bot.mention("restart checkout", user=APPROVER)  # the grant's maker asks: never their own approval
        bot.drain()
        assert not is_decided(bot.approval_messages()[-1])


SCALING = """\
rules:
  - name: scaling
    match: {tools: [scale_service]}
    grants: {durations: [15m, 1h]}
"""


def _open_similar(bot: Bot, *, user: str = APPROVER) -> dict[str, Any]:
    opened = len(bot.slack.calls("views.open"))
    assert bot.click(ids.ALLOW_SIMILAR_ACTION, bot.approval_id(-1), user=user).status == 200
    return dict(bot.slack.wait_for("views.open", count=opened + 1)[-1].response["view"])


def _submit_similar(bot: Bot, view: dict[str, Any], *, fields: list[str], seconds: int) -> Any:
    checkboxes = next(b for b in view["blocks"] if b.get("block_id") == ids.GRANT_FIELDS_BLOCK)["element"]
    durations = next(b for b in view["blocks"] if b.get("block_id") == ids.GRANT_DURATION_BLOCK)["element"]
    ticked = [option for option in checkboxes["options"] if option["value"] in fields]
    [chosen] = [option for option in durations["options"] if option["value"] == str(seconds)]
    payload = slack_requests.view_submission(
        callback_id=ids.GRANT_MODAL_CALLBACK,
        user_id=APPROVER,
        view_id=view["id"],
        external_id=view["external_id"],
        private_metadata=view["private_metadata"],
        values={
            ids.GRANT_FIELDS_BLOCK: {ids.GRANT_INPUT: {"type": "checkboxes", "selected_options": ticked}},
            ids.GRANT_DURATION_BLOCK: {ids.GRANT_INPUT: {"type": "static_select", "selected_option": chosen}},
        },
    )
    return bot.poster.post_view_submission(payload)


def test_a_grant_on_the_fields_the_approver_picks_covers_any_value_of_the_others(
    redis_client: redis.Redis, tmp_path: Path, clock: ManualClock
) -> None:
    policy = write(tmp_path, SCALING)
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as bot:
        bot.ask("scale checkout to 5")
        view = _open_similar(bot)  # the loopback Slack checks it as views.open does
        options = next(b for b in view["blocks"] if b.get("block_id") == ids.GRANT_FIELDS_BLOCK)["element"]["options"]
        assert [option["text"]["text"] for option in options] == ['service = "checkout"', "replicas = 5"]

        refused = _submit_similar(bot, view, fields=[], seconds=3600)
        assert refused.json() == {
            "response_action": "errors",
            "errors": {ids.GRANT_FIELDS_BLOCK: standing_approvals.NO_FIELD},
        }
        assert bot.services.grant_flow.live_for(APPROVER, team_id=TEAM) == []

        assert _submit_similar(bot, view, fields=["service"], seconds=3600).status == 200
        bot.drain()
        assert is_decided(bot.approval_messages()[-1])
        [(grant, *_)] = bot.services.grant_flow.live_for(APPROVER, team_id=TEAM)
        assert grant.tool_input == {"service": "checkout"}
        assert list(grant.fields or {}) == ["service"]
        assert "any other arguments" in "\n".join(bot.ephemeral_texts(APPROVER))

        bot.ask("scale checkout to 9")  # the picked field as it was, another value elsewhere: covered
        assert is_decided(bot.approval_messages()[-1])
        assert "checkout: scaled from 3 to 9 replicas" in "\n".join(bot.texts_posted())
        bot.ask("scale search to 5")  # the picked field changed: asked
        assert not is_decided(bot.approval_messages()[-1])
        assert "any other arguments" in json.dumps(_home(bot, APPROVER))  # App Home says what it covers

        assert bot.services.grant_flow.revoke(grant.team_id, grant.channel_id, grant.grant_id, actor=APPROVER)
        bot.ask("scale checkout to 7")  # revoked: asked again
        assert not is_decided(bot.approval_messages()[-1])

        view = _open_similar(bot)
        assert _submit_similar(bot, view, fields=["service"], seconds=900).status == 200
        bot.drain()
        clock.advance(901)  # a grant on picked fields ends by itself too
        bot.ask("scale checkout to 8")
        assert not is_decided(bot.approval_messages()[-1])


def test_allow_similar_is_not_offered_for_one_field_and_a_forged_click_opens_nothing(
    redis_client: redis.Redis, tmp_path: Path, clock: ManualClock
) -> None:
    policy = write(tmp_path, POLICY)
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy, clock=clock) as bot:
        bot.ask("restart checkout")  # one field: the exact call is all there is to allow
        message = bot.approval_messages()[-1]
        assert ids.ALLOW_SIMILAR_ACTION not in json.dumps(message["blocks"])
        opened = len(bot.slack.calls("views.open"))
        payload = bot.click_payload(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
        payload["actions"][0]["action_id"] = ids.ALLOW_SIMILAR_ACTION
        assert bot.poster.post_action(payload).status == 200
        bot.wait_told(APPROVER, standing_approvals.grant_not_offered())
        assert len(bot.slack.calls("views.open")) == opened
