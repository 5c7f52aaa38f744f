"""The timed policy keys: quorum, escalation ladders with rotations, claims, reminders, expiry."""

import textwrap
from pathlib import Path

import pytest

from bot.domain.policy.policy import PolicyBook
from bot.domain.policy.policy_file import PolicyError, load_policy
from bot.domain.records import LevelRecord
from tests.bot.support.policy_files import POLICIES

# A full ladder: a rotation, a quorum, two escalation levels, a claim pause, reminders, expiry.
LADDER = (POLICIES / "ladder.yml").read_text(encoding="utf-8")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.yml"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_full_ladder_is_recorded_on_the_request_in_seconds(tmp_path: Path) -> None:
    book = load_policy(_write(tmp_path, LADDER))
    summary = book.for_call(tool="deploy", interrupt_name="approval").summary()

    assert summary.quorum == 2
    assert summary.levels == (
        LevelRecord(after_s=900, usergroups=("S0ONCALL",)),
        LevelRecord(after_s=5400, users=("U0LEAD",), rotation="primary"),
    )
    assert (summary.repeat, summary.claim_pause_s, summary.remind_every_s) == (1, 1800, 600)
    assert (summary.expire_after_s, summary.expiry_outcome) == (14400, "deny")
    assert book.rotations["primary"].members == ("U0ALICE", "U0BOB")
    reads = book.for_call(tool="read_logs", interrupt_name="approval").summary()
    assert (reads.expire_after_s, reads.expiry_outcome) == (86400, "approve")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            LADDER.replace("rotation: primary", "rotation: secondary"),
            "line 17, rules[0].escalation.levels[1].targets.rotation: "
            "unknown rotation 'secondary' (rotations: primary)",
        ),
        (
            LADDER.replace("    low_risk: true\n", ""),
            "rules[1].expiry.outcome: 'approve' on expiry needs 'low_risk: true' on the same rule",
        ),
        (
            LADDER.replace("after: 15m", "after: soon"),
            "line 14, rules[0].escalation.levels[0].after: expected a duration like 90, '15m' or '1h30m', got 'soon'",
        ),
        (LADDER.replace("quorum: 2", "quorum: 0"), "line 11, rules[0].quorum"),
        (LADDER.replace("targets: {usergroups: [S0ONCALL]}", "targets: {}"), "needs users, usergroups or a rotation"),
        (LADDER.replace("outcome: deny", "outcome: shrug"), "line 21, rules[0].expiry.outcome"),
        (LADDER.replace("timezone: Europe/Berlin", "timezone: Mars/Base"), "unknown time zone 'Mars/Base'"),
    ],
)
def test_ladder_errors_name_the_field_and_line(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(PolicyError) as raised:
        load_policy(_write(tmp_path, text))
    assert expected in str(raised.value)


NEVER_AND_UNSET = """\
default:
  reason_required_on_deny: true
rules:
  - name: close
    match: {tools: [close_books]}
    expiry: never
  - name: deploys
    match: {tools: [deploy]}
  - name: reads
    match: {tools: [read_logs]}
    expiry: {after: 1h, outcome: keep}
"""


def _expiry(book: PolicyBook, tool: str | None, *batch: str) -> tuple[int | None, str | None]:
    summary = book.for_call(tool=tool, interrupt_name="approval", batch=batch).summary()
    return summary.expire_after_s, summary.expiry_outcome


def test_the_default_expiry_ends_what_sets_none_and_never_waits(tmp_path: Path) -> None:
    book = load_policy(_write(tmp_path, NEVER_AND_UNSET)).with_default_expiry(3 * 86_400)
    assert _expiry(book, "deploy") == (3 * 86_400, "deny")
    assert _expiry(book, "other") == (3 * 86_400, "deny")  # the default section sets none either
    assert _expiry(book, "read_logs") == (3600, "keep")
    assert _expiry(book, "close_books") == (None, None)
    # One answer covers a batch: a call whose rule sets none counts with the default's deny.
    assert _expiry(book, None, "close_books", "deploy") == (3 * 86_400, "deny")
    assert _expiry(book, None, "close_books", "read_logs") == (3600, "keep")
    assert book.default_policy.reason_required_on_deny is True  # nothing else changes


def test_without_a_default_expiry_a_rule_that_sets_none_waits(tmp_path: Path) -> None:
    book = load_policy(_write(tmp_path, NEVER_AND_UNSET))
    assert _expiry(book, "deploy") == (None, None)


@pytest.mark.parametrize(
    ("expiry", "expected"),
    [
        ("forever", "line 6, rules[0].expiry: expected 'never' or a section with 'after' and 'outcome', got 'forever'"),
        ("Never", "line 6, rules[0].expiry: expected 'never' or a section with 'after' and 'outcome', got 'Never'"),
        ("5", "line 6, rules[0].expiry: expected 'never' or a section with 'after' and 'outcome', got '5'"),
        ("{after: 1h}", "line 6, rules[0].expiry.outcome: required key is missing"),
    ],
)
def test_an_expiry_that_is_neither_never_nor_a_section_names_the_line(
    tmp_path: Path, expiry: str, expected: str
) -> None:
    text = NEVER_AND_UNSET.replace("expiry: never", f"expiry: {expiry}")
    with pytest.raises(PolicyError) as raised:
        load_policy(_write(tmp_path, text))
    assert str(raised.value) == f"{tmp_path / 'policy.yml'}, {expected}"
