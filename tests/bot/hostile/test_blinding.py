"""Hostile content and bad records must not blind a reader or reach a person raw."""

import redis

from bot import keys
from state import RedisServer
from tests.bot.agents import one_gated_call
from tests.bot.harness import running_bot
from tests.bot.processes import run_bot

HOSTILE_TOOL = "cat_report_\u202egpj.sh\x1b[2J\x1b[31m"


def test_audit_export_survives_one_non_utf8_entry(redis_client: redis.Redis, redis_server: RedisServer) -> None:
    """Nothing blinds: one corrupt audit entry among good ones; the export still writes the good ones."""
    with running_bot(redis_client, agent_factory=one_gated_call("deploy", {"x": 1})) as bot:
        bot.mention("deploy")
        bot.drain()
    good = int(redis_client.xlen(keys.AUDIT))
    assert good > 0
    redis_client.xadd(
        keys.AUDIT, {"event": b"\xff\xfe", "actor": "x", "session_id": "s", "at_ms": "1", "details": "{}"}
    )
    done = run_bot(["audit", "export"], REDIS_URL=redis_server.url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len([line for line in done.stdout.splitlines() if line.strip()]) >= good


def test_audit_export_survives_one_entry_with_a_bad_time(redis_client: redis.Redis, redis_server: RedisServer) -> None:
    """Nothing blinds: an entry whose at_ms is not a number."""
    redis_client.xadd(
        keys.AUDIT, {"event": "decision", "actor": "x", "session_id": "s", "at_ms": "soon", "details": "{}"}
    )
    redis_client.xadd(keys.AUDIT, {"event": "decision", "actor": "y", "session_id": "s", "at_ms": "1", "details": "{}"})
    done = run_bot(["audit", "export"], REDIS_URL=redis_server.url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"actor": "y"' in done.stdout


def test_audit_export_survives_deeply_nested_details(redis_client: redis.Redis, redis_server: RedisServer) -> None:
    """Nothing blinds: details nested 100,000 deep (json.loads raises RecursionError, not ValueError)."""
    deep = "[" * 100_000 + "]" * 100_000
    redis_client.xadd(keys.AUDIT, {"event": "decision", "actor": "x", "session_id": "s", "at_ms": "1", "details": deep})
    redis_client.xadd(keys.AUDIT, {"event": "decision", "actor": "y", "session_id": "s", "at_ms": "2", "details": "{}"})
    done = run_bot(["audit", "export"], REDIS_URL=redis_server.url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"actor": "y"' in done.stdout
