"""Operator commands given arguments they cannot use: one ``signoff: ...`` line, status 2, no traceback."""

from subprocess import PIPE
from typing import Any

import pytest

from bot.store import keys
from bot.store.audit import Audit
from tests.bot.support.processes import bot_environment, run_bot, start_bot


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["worker-health", "--max-age", "nan"], "--max-age"),
        (["worker-health", "--max-age", "inf"], "--max-age"),
        (["worker-health", "--max-age", "-5"], "--max-age"),
        (["worker-health", "--max-age", "0"], "--max-age"),
        (["resume", ""], "session"),
    ],
)
def test_unusable_arguments_end_with_one_message_and_status_2(redis_url: str, args: list[str], named: str) -> None:
    completed = run_bot(args, REDIS_URL=redis_url)
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    assert named in completed.stderr


def test_an_export_that_cannot_be_written_marks_nothing_exported(redis_url: str, redis_client: Any) -> None:
    """A full disk must not count as exported: with ``AUDIT_KEEP_UNEXPORTED`` the trim would drop what nobody has."""
    audit = Audit(redis_client)
    for n in range(5):
        audit.record("decision", session_id=f"s{n}", actor="U1")
    completed = run_bot(["audit", "export", "--output", "/dev/full"], REDIS_URL=redis_url)
    assert completed.returncode != 0
    assert "Traceback" not in completed.stderr
    assert "/dev/full" in completed.stderr
    assert [redis_client.get(keys.audit_exported(shard)) for shard in keys.shards()] == [None] * len(keys.shards())
    dropped = audit.trim(max_entries=0, keep_unexported=True)
    assert dropped == 0
    assert len(list(audit.entries())) == 5


def test_an_export_to_a_missing_folder_says_so(redis_url: str) -> None:
    completed = run_bot(["audit", "export", "--output", "/nonexistent/folder/audit.jsonl"], REDIS_URL=redis_url)
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    assert "/nonexistent/folder/audit.jsonl" in completed.stderr


def test_an_export_into_a_closed_pipe_says_so_and_marks_nothing(redis_url: str, redis_client: Any) -> None:
    audit = Audit(redis_client)
    for n in range(2000):
        audit.record("decision", session_id=f"s{n}", actor="U1", note="x" * 100)
    exporter = start_bot(["audit", "export"], bot_environment(REDIS_URL=redis_url), stdout=PIPE, stderr=PIPE)
    assert exporter.stdout is not None
    assert exporter.stderr is not None
    exporter.stdout.readline()
    exporter.stdout.close()  # what `| head -1` does
    stderr = exporter.stderr.read()
    assert exporter.wait(timeout=60) == 1
    assert "Traceback" not in stderr
    assert "standard output" in stderr
    assert [redis_client.get(keys.audit_exported(shard)) for shard in keys.shards()] == [None] * len(keys.shards())


@pytest.mark.parametrize("since", ["0001-01-01", "1969-12-31T23:59:59Z"])
def test_an_export_since_before_1970_exports_everything(redis_url: str, redis_client: Any, since: str) -> None:
    """No stream id is older than the epoch: such a ``--since`` keeps every event, it is no Redis failure."""
    audit = Audit(redis_client)
    for n in range(3):
        audit.record("decision", session_id=f"s{n}", actor="U1")
    completed = run_bot(["audit", "export", "--since", since], REDIS_URL=redis_url)
    assert completed.returncode == 0, completed.stderr
    assert len(completed.stdout.splitlines()) == 3
