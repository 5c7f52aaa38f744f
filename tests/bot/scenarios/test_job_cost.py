"""What a job costs in session reads and writes: the session is loaded once per job, and written only when a step
must be durable (the request taken, the stop, a call started, its result, the answer)."""

from collections import Counter
from typing import Any

import pytest

from bot.render import action_ids as ids
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER


def _count_calls(owner: object, names: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count calls of ``owner``'s methods ``names`` (the owner stays real: every call goes through)."""
    counts: Counter[str] = Counter()
    for name in names:
        original = getattr(owner, name)

        def counted(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            counts[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
    return counts


def test_a_start_and_a_resume_each_load_the_session_once_and_write_it_only_at_durable_steps(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = _count_calls(bot.services.stores.sessions, ("load", "save"), monkeypatch)

    bot.mention("restart checkout")
    bot.drain()
    assert counts == {"load": 1, "save": 2}  # the request taken; the stop on the approval

    counts.clear()
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()
    assert counts == {"load": 1, "save": 3}  # the restart started; its result; the answer
    assert "checkout: 3 replicas restarted" in bot.texts_posted()[-1]


def test_a_resume_reads_its_round_once(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    bot.mention("restart checkout")
    bot.drain()
    counts = _count_calls(bot.services.stores.approvals, ("round_approvals",), monkeypatch)

    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    bot.drain()

    assert counts == {"round_approvals": 1}
    assert "checkout: 3 replicas restarted" in bot.texts_posted()[-1]
