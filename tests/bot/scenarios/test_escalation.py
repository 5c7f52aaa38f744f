"""Pending requests do not rot: reminders, the escalation ladder, claims, expiry, quorum, DMs, App Home.

Time comes from one manual clock shared by the whole bot: tests move it instead of sleeping.
"""

import json
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import redis

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from loopback_slack import slack_requests
from tests.bot.support.harness import Bot, demo_factory, home_click, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, OUTSIDER, SECOND_APPROVER

ROTATION = """\
rotations:
  primary:
    members: [U0ONCALLA, U0ONCALLB]
    shift: 1d
    handoff: "09:00"
    timezone: UTC
    starts: 2026-11-29
"""


@contextmanager
def _bot(redis_client: redis.Redis, tmp_path: Path, rules: str) -> Iterator[tuple[Bot, ManualClock]]:
    policy = tmp_path / "policy.yml"
    policy.write_text(ROTATION + "rules:\n" + textwrap.indent(textwrap.dedent(rules), "  "))
    clock = ManualClock()
    with running_bot(
        redis_client,
        agent_factory=demo_factory,
        policy_path=policy,
        usergroups={"S0ONCALL": ["U0ONCALLA"]},
        clock=clock,
    ) as bot:
        yield bot, clock


def _ask(bot: Bot, request: str = "restart checkout") -> str:
    bot.mention(request)
    bot.drain()
    return str(bot.approval_messages()[0]["thread_ts"])


def _later(bot: Bot, clock: ManualClock, minutes: float) -> list[str]:
    """Move time, let the worker act, return what the bot posted meanwhile."""
    before = len(bot.texts_posted())
    clock.advance(minutes * 60)
    bot.drain()
    return bot.texts_posted()[before:]


LADDER = """\
- name: service-changes
  match: {tools: [restart_service]}
  approvers: {users: [U0APPROVER, U0SECOND, U0ONCALLA, U0ONCALLB]}
  escalation:
    levels:
      - after: 10m
        targets: {usergroups: [S0ONCALL]}
      - after: 20m
        targets: {rotation: primary, users: [U0LEAD]}
    repeat: 0
  claim: {pause: 30m}
"""


def test_the_ladder_walks_its_levels_in_order_and_stops_at_a_decision(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    with _bot(redis_client, tmp_path, LADDER) as (bot, clock):
        _ask(bot)
        assert _later(bot, clock, 9) == []

        [first] = _later(bot, clock, 1)
        assert "level 1" in first
        assert "<!subteam^S0ONCALL>" in first

        # 30 Nov 09:00 UTC is the second day of a daily rotation that started on 29 Nov: U0ONCALLB.
        posted = _later(bot, clock, 20)
        [second] = [text for text in posted if "Escalation" in text]
        assert "level 2" in second
        assert "<@U0ONCALLB>" in second
        assert "<@U0LEAD>" in second
        [dm] = [call for call in bot.slack.calls("chat.postMessage") if call.args["channel"] == "U0ONCALLB"]
        assert "restart_service" in dm.args["text"]

        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert [text for text in _later(bot, clock, 120) if "Escalation" in text] == []
        assert bot.services.stores.schedule.pending() == 0
        events = [entry.event for entry in bot.services.stores.audit.entries()]
        assert events.count("escalation") == 2


def test_a_claim_pauses_the_ladder_and_shows_who_is_looking(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path, LADDER) as (bot, clock):
        _ask(bot)
        clock.advance(5 * 60)
        assert bot.click(ids.TAKE_ACTION, bot.approval_id(), user=SECOND_APPROVER).status == 200
        bot.drain()
        assert f"Claimed by <@{SECOND_APPROVER}>" in json.dumps(bot.approval_messages()[0]["blocks"])
        assert "You claimed this request" in bot.ephemeral_texts(SECOND_APPROVER)[0]

        assert [text for text in _later(bot, clock, 20) if "Escalation" in text] == []  # 25 min: paused
        resumed = [text for text in _later(bot, clock, 15) if "Escalation" in text]  # 40 min: pause over
        assert len(resumed) == 1
        assert "level 1" in resumed[0]


def test_a_click_on_a_claim_button_posted_before_take_was_named_still_takes_the_request(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    with _bot(redis_client, tmp_path, LADDER) as (bot, _clock):
        _ask(bot)
        payload = bot.click_payload(ids.TAKE_ACTION, bot.approval_id(), user=SECOND_APPROVER)
        payload["actions"][0]["action_id"] = "signoff_claim"  # the id such messages still carry in Slack
        assert bot.poster.post_action(payload).status == 200
        bot.drain()
        assert f"Claimed by <@{SECOND_APPROVER}>" in json.dumps(bot.approval_messages()[0]["blocks"])
        assert "You claimed this request" in bot.ephemeral_texts(SECOND_APPROVER)[0]


def test_a_claim_by_someone_who_may_not_decide_is_refused(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path, LADDER) as (bot, _clock):
        _ask(bot)
        bot.click(ids.TAKE_ACTION, bot.approval_id(), user=OUTSIDER)
        bot.drain()
        assert "Claimed by" not in json.dumps(bot.approval_messages()[0]["blocks"])
        assert "<@U0APPROVER>" in bot.ephemeral_texts(OUTSIDER)[0]


def test_repeat_walks_the_whole_ladder_again_then_stops(redis_client: redis.Redis, tmp_path: Path) -> None:
    rules = """\
    - name: service-changes
      match: {tools: [restart_service]}
      escalation:
        levels:
          - after: 10m
            targets: {users: [U0LEAD]}
        repeat: 2
    """
    with _bot(redis_client, tmp_path, rules) as (bot, clock):
        _ask(bot)
        posted = []
        for _ in range(6):
            posted += [text for text in _later(bot, clock, 10) if "Escalation" in text]
        assert len(posted) == 3  # the one-level ladder, walked three times


REMINDERS_EVERY_15M = """\
    - name: service-changes
      match: {tools: [restart_service]}
      reminders: {every: 15m}
    """


def test_reminders_nudge_the_thread_until_a_decision(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path, REMINDERS_EVERY_15M) as (bot, clock):
        _ask(bot)
        assert [text for text in _later(bot, clock, 15) if "Still waiting" in text]
        assert [text for text in _later(bot, clock, 15) if "Still waiting" in text]
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert [text for text in _later(bot, clock, 60) if "Still waiting" in text] == []


def test_expiry_deny_tells_the_model_it_expired_not_that_a_human_denied(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    rules = """\
    - name: service-changes
      match: {tools: [restart_service]}
      expiry: {after: 1h, outcome: deny}
    """
    with _bot(redis_client, tmp_path, rules) as (bot, clock):
        thread_ts = _ask(bot)
        expiry = int((clock() + timedelta(hours=1)).timestamp())
        assert f"<!date^{expiry}^" in json.dumps(bot.approval_messages()[0]["blocks"])  # says when it expires
        posted = _later(bot, clock, 61)
        assert "Not run: nobody decided in time." in posted[-1]
        assert "Do not retry" not in posted[-1]
        assert "denied" not in posted[-1]
        assert "Expired without a decision" in json.dumps(bot.approval_messages()[0]["blocks"])
        assert bot.thread_texts(thread_ts)[-1] == posted[-1]


def test_a_rule_without_expiry_ends_after_the_default_expiry(redis_client: redis.Redis, tmp_path: Path) -> None:
    rules = """\
    - name: service-changes
      match: {tools: [restart_service]}
    """
    with _bot(redis_client, tmp_path, rules) as (bot, clock):
        thread_ts = _ask(bot)
        expiry = int((clock() + timedelta(days=7)).timestamp())  # DEFAULT_EXPIRY unset: 7 days
        assert f"Expires <!date^{expiry}^" in json.dumps(bot.approval_messages()[0]["blocks"])
        assert not any("nobody decided" in text for text in _later(bot, clock, 7 * 24 * 60 - 1))
        posted = _later(bot, clock, 2)
        assert "Not run: nobody decided in time." in posted[-1]
        assert "Expired without a decision" in json.dumps(bot.approval_messages()[0]["blocks"])
        assert bot.thread_texts(thread_ts)[-1] == posted[-1]
        [expired] = [entry for entry in bot.services.stores.audit.entries() if entry.event == "expiry"]
        assert expired.details["outcome"] == "deny"


def test_expiry_never_waits_past_the_default_until_someone_decides(redis_client: redis.Redis, tmp_path: Path) -> None:
    rules = """\
    - name: service-changes
      match: {tools: [restart_service]}
      expiry: never
    """
    with _bot(redis_client, tmp_path, rules) as (bot, clock):
        _ask(bot)
        assert "Expires" not in json.dumps(bot.approval_messages()[0]["blocks"])
        assert bot.services.stores.schedule.pending() == 0  # nothing of it feeds the schedule
        assert _later(bot, clock, 30 * 24 * 60) == []
        assert not is_decided(bot.approval_messages()[0])
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert bot.texts_posted()[-1] == "checkout: 3 replicas restarted"


def test_expiry_keep_leaves_the_request_open(redis_client: redis.Redis, tmp_path: Path) -> None:
    rules = """\
    - name: service-changes
      match: {tools: [restart_service]}
      expiry: {after: 1h, outcome: keep}
    """
    with _bot(redis_client, tmp_path, rules) as (bot, clock):
        _ask(bot)
        assert any("stays open" in text for text in _later(bot, clock, 61))
        assert not is_decided(bot.approval_messages()[0])
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        assert bot.texts_posted()[-1] == "checkout: 3 replicas restarted"


def test_expiry_approve_runs_a_low_risk_call(redis_client: redis.Redis, tmp_path: Path) -> None:
    rules = """\
    - name: service-changes
      match: {tools: [restart_service]}
      low_risk: true
      expiry: {after: 1h, outcome: approve}
    """
    with _bot(redis_client, tmp_path, rules) as (bot, clock):
        _ask(bot)
        assert _later(bot, clock, 61)[-1] == "checkout: 3 replicas restarted"
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.decision is not None
        assert approval.decision.decided_by is None
        assert "automatically" in (approval.decision.reason or "")


QUORUM = """\
- name: scaling
  match: {tools: [scale_service]}
  approvers: {users: [U0APPROVER, U0SECOND, U0THIRD]}
  quorum: 2
  reason_required_on_deny: true
"""


def test_quorum_two_needs_two_distinct_approvers(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path, QUORUM) as (bot, _clock):
        _ask(bot, "scale search to 5")
        approval_id = bot.approval_id()
        bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
        bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
        bot.drain()
        assert not is_decided(bot.approval_messages()[0])
        assert "1 of 2 approvals so far" in json.dumps(bot.approval_messages()[0]["blocks"])
        notices = bot.ephemeral_texts(APPROVER)
        assert "1 of 2 needed" in notices[0]
        assert "already approved" in notices[1]

        bot.click(ids.APPROVE_ACTION, approval_id, user=SECOND_APPROVER)
        bot.drain()
        assert bot.texts_posted()[-1] == "search: scaled from 2 to 5 replicas"
        approval = bot.services.stores.approvals.find(approval_id)
        assert approval is not None
        assert approval.decision is not None
        assert approval.decision.approved_by == (APPROVER, SECOND_APPROVER)


def test_quorum_two_with_one_deny_ends_it(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path, QUORUM) as (bot, _clock):
        _ask(bot, "scale search to 5")
        approval_id = bot.approval_id()
        bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
        bot.drain()
        bot.submit_deny(approval_id, user=SECOND_APPROVER, reason="not during the sale")
        bot.drain()
        assert is_decided(bot.approval_messages()[0])
        assert f"<@{SECOND_APPROVER}> denied it: not during the sale" in bot.texts_posted()[-1]


def test_a_decision_from_the_on_call_dm_updates_both_messages(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path, LADDER) as (bot, clock):
        thread_ts = _ask(bot)
        _later(bot, clock, 10)
        _later(bot, clock, 20)
        [dm] = [call for call in bot.slack.calls("chat.postMessage") if call.args["channel"] == "U0ONCALLB"]
        dm_channel = str(dm.response["channel"])
        dm_message = bot.slack.message(dm_channel, str(dm.response["ts"]))
        assert dm_message is not None

        bot.click_message(
            ids.APPROVE_ACTION, bot.approval_id(), user="U0ONCALLB", channel=dm_channel, message=dm_message
        )
        bot.drain()

        updated = {call.args["channel"] for call in bot.slack.calls("chat.update")}
        assert updated == {CHANNEL, dm_channel}
        assert is_decided(bot.approval_messages()[0])
        dm_now = bot.slack.message(dm_channel, str(dm.response["ts"]))
        assert dm_now is not None
        assert is_decided(dm_now)
        assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"


def test_two_workers_ticking_the_same_schedule_fire_each_item_once(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path, REMINDERS_EVERY_15M) as (bot, clock):
        for index in range(20):
            bot.mention(f"restart checkout {index}")
        bot.drain()
        assert len(bot.approval_messages()) == 20
        clock.advance(15 * 60)
        other = bot.services.worker()
        barrier = threading.Barrier(2)

        def tick(worker: object) -> None:
            barrier.wait()
            while bot.services.escalator.tick(limit=3):
                pass

        threads = [threading.Thread(target=tick, args=(worker,)) for worker in (bot.worker, other)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        bot.drain()
        reminders = [text for text in bot.texts_posted() if "Still waiting" in text]
        assert len(reminders) == 20
        audited = [entry for entry in bot.services.stores.audit.entries() if entry.event == "reminder"]
        assert len({entry.details["approval_id"] for entry in audited}) == 20
        assert len(audited) == 20


def test_app_home_shows_an_approver_their_queue_and_a_non_approver_nothing(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    with _bot(redis_client, tmp_path, LADDER) as (bot, _clock):
        _ask(bot)
        for user in (APPROVER, OUTSIDER):
            event = {"type": "app_home_opened", "user": user, "channel": f"D{user}", "tab": "home"}
            assert bot.poster.post_event(slack_requests.event_callback(event)).status == 200
        bot.drain()  # the tab is built and published by the outbox, not within the event's 3 seconds
        published = {call.args["user_id"]: call.args["view"] for call in bot.slack.calls("views.publish")}

        approver_view = json.dumps(published[APPROVER])
        assert ids.APPROVE_ACTION in approver_view
        assert bot.approval_id() in approver_view
        outsider_view = json.dumps(published[OUTSIDER])
        assert ids.APPROVE_ACTION not in outsider_view
        assert "Nothing is waiting for you" in outsider_view

        bot.slack.clear_calls()
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        bot.drain()
        refreshed = {call.args["user_id"]: json.dumps(call.args["view"]) for call in bot.slack.calls("views.publish")}
        assert ids.APPROVE_ACTION not in refreshed[APPROVER]
        assert "Approved by" in refreshed[APPROVER]  # now under recent decisions


def test_slash_approvals_lists_what_waits_in_the_channel(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _bot(redis_client, tmp_path, LADDER) as (bot, clock):
        _ask(bot)
        clock.advance(7 * 60)
        text = bot.slash_approvals()
        assert "1 request waiting" in text
        assert "`restart_service`" in text
        assert "waiting 7 min" in text
        assert "|open>" in text


def test_a_click_on_the_app_home_decides_and_answers_by_direct_message(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    with _bot(redis_client, tmp_path, LADDER) as (bot, _clock):
        thread_ts = _ask(bot)
        approval_id = bot.approval_id()
        click = home_click(ids.APPROVE_ACTION, approval_id, user=OUTSIDER)
        assert bot.poster.post_action(click).status == 200
        bot.drain()
        [refusal] = [call for call in bot.slack.calls("chat.postMessage") if call.args["channel"] == OUTSIDER]
        assert "<@U0APPROVER>" in refusal.args["text"]

        click["user"]["id"] = APPROVER
        assert bot.poster.post_action(click).status == 200
        bot.drain()
        assert is_decided(bot.approval_messages()[0])
        assert bot.thread_texts(thread_ts)[-1] == "checkout: 3 replicas restarted"
