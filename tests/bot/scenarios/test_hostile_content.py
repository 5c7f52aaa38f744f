"""What agents and users send is shown as data, within Slack's limits, and no record blinds the bot."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.store import keys
from loopback_slack import slack_requests
from tests.bot.support import shards
from tests.bot.support.agents import nested, one_gated_call
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER
from tests.bot.support.processes import run_bot


@contextmanager
def _bot(redis_client: redis.Redis, factory: Any) -> Iterator[Bot]:
    with running_bot(redis_client, agent_factory=factory) as bot:
        yield bot


def _open_home(bot: Bot, user: str) -> dict[str, Any]:
    """``user`` opens the App Home tab; the view published for them (it must be published)."""
    before = len(bot.slack.calls("views.publish"))
    event = {"type": "app_home_opened", "user": user, "channel": f"D{user}", "tab": "home"}
    assert bot.poster.post_event(slack_requests.event_callback(event)).status == 200
    bot.drain()
    published = [call for call in bot.slack.calls("views.publish")[before:] if call.ok]
    assert published, "the App Home was not published"
    return dict(published[-1].args["view"])


def test_arguments_nested_200_deep_are_posted_shortened_and_can_be_decided(redis_client: redis.Redis) -> None:
    with _bot(redis_client, one_gated_call("purge_cache", nested(200))) as bot:
        bot.mention("purge")
        bot.drain()

        [message] = bot.approval_messages()
        shown = json.dumps(message["blocks"], ensure_ascii=False)
        assert "nested too deeply" in shown
        assert "purge_cache" in bot.slash_approvals()
        assert bot.approval_id() in json.dumps(_open_home(bot, APPROVER))

        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
        bot.drain()
        assert is_decided(bot.approval_messages()[0])
        assert shards.open_approvals(bot.services.stores.redis) == []


def _open_index(client: redis.Redis) -> list[str]:
    members = shards.open_approvals(client)
    return [member.decode() for member in members]


def _write_too_deep(bot: Bot, session_id: str, approval_id: str) -> None:
    """Store the request as a version without bounds did: valid JSON, nested deeper than a reader parses."""
    key = keys.approval(session_id, approval_id)
    stored = json.loads(bot.services.stores.redis.hget(key, "request") or b"{}")
    stored["tool_input"] = nested(200)
    bot.services.stores.redis.hset(key, "request", json.dumps(stored))


def test_an_unreadable_record_is_quarantined_and_every_other_request_keeps_working(
    redis_url: str, redis_client: redis.Redis
) -> None:
    with running_bot(redis_client, agent_factory=demo_factory) as bot:
        good_id, _session = bot.ask("restart checkout")
        _open_home(bot, APPROVER)  # a viewer whose tab is refreshed on every change
        bot.mention("restart search")
        while bot.worker.run_jobs_once(block_ms=1):  # the round is stored; its message not posted yet
            pass
        [bad_id] = set(_open_index(redis_client)) - {good_id}
        bad_session = bot.services.stores.approvals.session_of(bad_id)
        assert bad_session is not None
        _write_too_deep(bot, bad_session, bad_id)
        bot.drain()

        assert [bot.approval_id(i) for i in range(len(bot.approval_messages()))] == [good_id]
        assert good_id in json.dumps(_open_home(bot, APPROVER))
        assert "1 request waiting" in bot.slash_approvals()
        assert _open_index(redis_client) == [good_id]
        assert bad_id in bot.services.stores.approvals.quarantined()
        assert bot.services.stores.outbox.dead_letters() == {}

        listed = run_bot(["pending"], REDIS_URL=redis_url)
        assert listed.returncode == 0, listed.stderr
        assert "Traceback" not in listed.stderr
        assert good_id in listed.stdout
        assert f"{bad_id}  session {bad_session}" in listed.stdout
        assert "1 approval(s) quarantined" in listed.stderr

        assert bot.click(ids.APPROVE_ACTION, good_id, user=APPROVER).status == 200
        bot.drain()
        assert is_decided(bot.approval_messages()[0])


def _shown(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False)


def test_hidden_and_direction_characters_are_shown_and_flagged_wherever_a_person_decides(
    redis_client: redis.Redis,
) -> None:
    tool_name = "run\u2066_script"  # a left-to-right isolate hidden in the tool's name
    with _bot(redis_client, one_gated_call(tool_name, "cat report_\u202egpj.sh")) as bot:
        bot.mention("show the report")
        bot.drain()
        [message] = bot.approval_messages()
        home = _open_home(bot, APPROVER)
        assert bot.click(ids.DENY_ACTION, bot.approval_id(), user=APPROVER).status == 200
        [opened] = bot.slack.wait_for("views.open")

        for shown in (_shown(message["blocks"]), _shown(home), _shown(opened.args["view"])):
            assert "\u202e" not in shown
            assert "\u2066" not in shown
            assert "run⟨U+2066⟩_script" in shown
            assert "Contains hidden characters" in shown
        assert "cat report_⟨U+202E⟩gpj.sh" in _shown(message["blocks"])
        assert "run⟨U+2066⟩_script" in message["text"]


def test_an_agent_request_is_echoed_as_inert_text(bot: Bot) -> None:
    typed = "<!channel> <@U0123> <https://evil.example|Click me> & co"
    command = slack_requests.slash_command(command=ids.AGENT_COMMAND, user_id=REQUESTER, channel_id=CHANNEL, text=typed)
    assert bot.poster.post_command(command).status == 200

    [anchor] = bot.slack.wait_for("chat.postMessage")
    echoed = anchor.args["text"]
    assert echoed == (
        f"<@{REQUESTER}> asked the agent: "
        "&lt;!channel&gt; &lt;@U0123&gt; &lt;https://evil.example|Click me&gt; &amp; co"
    )


def test_the_on_call_direct_message_shows_hidden_characters_too(redis_client: redis.Redis, tmp_path: Path) -> None:
    tool_name = "run\u2066_script"
    policy = tmp_path / "policy.yml"
    policy.write_text(
        "rotations:\n"
        "  primary: {members: [U0ONCALLA], shift: 1d, handoff: '09:00', timezone: UTC, starts: 2026-11-29}\n"
        "rules:\n"
        "  - name: scripts\n"
        '    match: {tools: ["run\\u2066_script"]}\n'
        "    escalation: {levels: [{after: 5m, targets: {rotation: primary}}]}\n"
    )
    clock = ManualClock()
    factory = one_gated_call(tool_name, "cat report_\u202egpj.sh")
    with running_bot(redis_client, agent_factory=factory, policy_path=policy, clock=clock) as bot:
        bot.mention("show the report")
        bot.drain()
        clock.advance(6 * 60)
        bot.drain()

        [dm] = [call for call in bot.slack.calls("chat.postMessage") if call.args["channel"] == "U0ONCALLA"]
        shown = _shown(dm.args["blocks"])
        assert "Policy *scripts*" in shown
        assert "\u202e" not in shown
        assert "cat report_⟨U+202E⟩gpj.sh" in shown
        assert "Contains hidden characters" in shown


def test_app_home_shows_what_a_click_would_run_escaped_and_bounded_as_the_message_does(
    redis_client: redis.Redis,
) -> None:
    hostile = {"target": "*prod* <!channel> `x` \u202eevil", "blob": "y" * 5000}
    with _bot(redis_client, one_gated_call("purge_cache", hostile)) as bot:
        bot.mention("purge")
        bot.drain()
        [message] = bot.approval_messages()
        home = _open_home(bot, APPROVER)
        [arguments] = [block for block in home["blocks"] if "Arguments" in json.dumps(block)]
        # The very section the message shows: the same escaping, hidden characters made visible, the same bound.
        assert arguments in message["blocks"]
        shown = arguments["text"]["text"]
        assert "<!channel>" not in shown
        assert "&lt;!channel&gt;" in shown
        assert "⟨U+202E⟩" in shown
        assert len(shown) <= 3000

        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
        bot.drain()
        recent = json.dumps(_open_home(bot, APPROVER), ensure_ascii=False)
        assert '`purge_cache` `{\\"payload\\":{\\"target\\":' in recent
        assert "<!channel>" not in recent
        assert "…" in recent  # the one-line arguments are cut, not the whole 5,000 characters
        assert "y" * 200 not in recent
