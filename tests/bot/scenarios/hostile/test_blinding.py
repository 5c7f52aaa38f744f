"""Hostile content and bad records must not blind a reader or reach a person raw."""

from typing import Any

import redis

from bot.render import action_ids as ids
from bot.store import keys
from loopback_slack import slack_requests
from tests.bot.support import shards
from tests.bot.support.agents import one_gated_call
from tests.bot.support.harness import running_bot
from tests.bot.support.people import APPROVER
from tests.bot.support.processes import run_bot

HOSTILE_TOOL = "cat_report_\u202egpj.sh\x1b[2J\x1b[31m"


def test_audit_export_survives_one_non_utf8_entry(redis_client: redis.Redis, redis_url: str) -> None:
    """Nothing blinds: one corrupt audit entry among good ones; the export still writes the good ones."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"x": 1})) as bot:
        bot.mention("deploy")
        bot.drain()
    good = shards.audit_length(redis_client)
    assert good > 0
    redis_client.xadd(
        keys.audit(0), {"event": b"\xff\xfe", "actor": "x", "session_id": "s", "at_ms": "1", "details": "{}"}
    )
    done = run_bot(["audit", "export"], REDIS_URL=redis_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len([line for line in done.stdout.splitlines() if line.strip()]) >= good


def test_audit_export_survives_one_entry_with_a_bad_time(redis_client: redis.Redis, redis_url: str) -> None:
    """Nothing blinds: an entry whose at_ms is not a number."""
    redis_client.xadd(
        keys.audit(0), {"event": "decision", "actor": "x", "session_id": "s", "at_ms": "soon", "details": "{}"}
    )
    redis_client.xadd(
        keys.audit(0), {"event": "decision", "actor": "y", "session_id": "s", "at_ms": "1", "details": "{}"}
    )
    done = run_bot(["audit", "export"], REDIS_URL=redis_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"actor": "y"' in done.stdout


def test_audit_export_survives_deeply_nested_details(redis_client: redis.Redis, redis_url: str) -> None:
    """Nothing blinds: details nested 100,000 deep (json.loads raises RecursionError, not ValueError)."""
    deep = "[" * 100_000 + "]" * 100_000
    redis_client.xadd(
        keys.audit(0), {"event": "decision", "actor": "x", "session_id": "s", "at_ms": "1", "details": deep}
    )
    redis_client.xadd(
        keys.audit(0), {"event": "decision", "actor": "y", "session_id": "s", "at_ms": "2", "details": "{}"}
    )
    done = run_bot(["audit", "export"], REDIS_URL=redis_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"actor": "y"' in done.stdout


def test_pending_shows_hidden_and_terminal_control_characters_visibly(
    redis_client: redis.Redis, redis_url: str
) -> None:
    """Truthful: the operator's `python -m bot pending` prints a tool name with U+202E and ANSI escapes raw."""
    with running_bot(redis_client, agent_factory=one_gated_call(HOSTILE_TOOL, {"x": 1})) as bot:
        bot.mention("go")
        bot.drain()
        assert bot.approval_messages()
    done = run_bot(["pending"], REDIS_URL=redis_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cat_report_" in done.stdout
    assert "\u202e" not in done.stdout
    assert "\x1b" not in done.stdout


def test_pending_survives_one_session_with_a_corrupt_round(redis_client: redis.Redis, redis_url: str) -> None:
    """Nothing blinds: one session's round record is garbage; `pending` still lists the other session."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"x": 1})) as bot:
        _first, first_session = bot.ask("one")
        second, _second_session = bot.ask("two")
    redis_client.hset(keys.round_(first_session), "approvals", "{garbage")
    done = run_bot(["pending"], REDIS_URL=redis_url)
    assert done.returncode == 0, done.stderr[-1500:]
    assert second in done.stdout


def test_home_and_approvals_survive_a_non_utf8_member_of_the_open_index(redis_client: redis.Redis) -> None:
    """Nothing blinds: one foreign member in the open index; Home and /approvals still answer."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"x": 1})) as bot:
        approval_id, _ = bot.ask("one")
        redis_client.zadd(keys.open_index(0), {b"\xff\xfe": 0})
        text = bot.slash_approvals()
        assert "deploy" in text, text
        event = {"type": "app_home_opened", "user": APPROVER, "channel": "D1", "tab": "home"}
        assert bot.poster.post_event(slack_requests.event_callback(event)).status == 200
        bot.drain()
        published = [c for c in bot.slack.calls("views.publish") if c.ok and c.args.get("user_id") == APPROVER]
        assert published
        assert approval_id in str(published[-1].args["view"])


def test_resume_of_a_session_with_an_unreadable_approval_is_one_clear_refusal(
    redis_client: redis.Redis, redis_url: str
) -> None:
    """Nothing blinds: `python -m bot resume` on a session whose approval is corrupt says so (no traceback)."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"x": 1})) as bot:
        approval_id, session_id = bot.ask("one")
        bot.corrupt(approval_id, session_id)
    done = run_bot(["resume", session_id], REDIS_URL=redis_url)
    assert "Traceback" not in done.stderr, done.stderr[-1500:]
    assert done.returncode == 1
    jobs: Any = shards.jobs(redis_client)
    assert not [fields for _id, fields in jobs if fields.get(b"kind") == b"resume"]


def test_approvals_answers_when_one_permalink_cannot_be_had(redis_client: redis.Redis) -> None:
    """Nothing blinds: one request whose message Slack no longer finds (deleted); /approvals still lists the rest."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"x": 1})) as bot:
        bot.ask("one")
        bot.ask("two")
        bot.slack.error_next("chat.getPermalink", "message_not_found")
        text = bot.slash_approvals()
        assert "deploy" in text, text


def test_a_lone_surrogate_in_tool_arguments_still_posts_an_approval(redis_client: redis.Redis) -> None:
    """Nothing blinds: a model's JSON may carry a lone surrogate (\\ud800 is valid JSON); the request is still shown."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"note": "a\ud800b"})) as bot:
        bot.mention("deploy")
        bot.drain()
        assert bot.approval_messages(), bot.texts_posted()


def test_a_lone_surrogate_is_spelled_out_and_the_call_runs_as_the_model_gave_it(redis_client: redis.Redis) -> None:
    """Truthful and lossless: the message shows ⟨U+D800⟩; once approved the tool runs and the thread hears."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"note": "a\ud800b"})) as bot:
        bot.mention("deploy")
        bot.drain()
        [message] = bot.approval_messages()
        assert "a⟨U+D800⟩b" in str(message["blocks"])
        assert bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER).status == 200
        bot.drain()
        assert bot.thread_texts(str(message["thread_ts"]))[-1] == "done"


def test_a_value_no_record_can_hold_is_refused_once_with_a_clear_message(redis_client: redis.Redis) -> None:
    """Nothing blinds: NaN in a model's tool arguments has no JSON form; the thread is told at once, no retries."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"ratio": float("nan")})) as bot:
        bot.mention("deploy")
        bot.drain()
        texts = bot.texts_posted()
        assert not [text for text in texts if "will retry" in text], texts
        assert [text for text in texts if "cannot be stored" in text and "not retried" in text], texts
        assert bot.worker.jobs.pending_count() == 0
