"""Operator commands given arguments they cannot use: one ``signoff: ...`` line, status 2, no traceback."""

import pytest

from tests.bot.support.processes import run_bot


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
