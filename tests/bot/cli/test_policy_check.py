"""``python -m bot policy check``, run as a real process: which rule a sample call gets and why, or one message
naming what is wrong (exit status 2)."""

from pathlib import Path

import pytest

from tests.bot.support.policy_files import TIERED, write
from tests.bot.support.processes import run_bot


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    return write(tmp_path, TIERED)


def _check(policy: Path, *arguments: str) -> tuple[int, str, str]:
    ran = run_bot(["policy", "check", str(policy), *arguments])
    return ran.returncode, ran.stdout, ran.stderr


def test_it_names_each_rule_weighed_and_the_one_that_applies(policy: Path) -> None:
    status, out, _ = _check(policy, "--tool", "scale_service", "--input", '{"replicas": 5}')
    assert status == 0
    assert out.splitlines() == [
        'call: scale_service {"replicas": 5}',
        "  rule 'big-scale': condition 'args.replicas > 10' is false, does not apply",
        "  rule 'small-scale': condition 'args.replicas <= 3 && tool == \"scale_service\"' is false, does not apply",
        "  rule 'scaling': no condition, applies (tier ask)",
        "policy: scaling (asked: people decide)",
        "who decides: anyone in the channel except the requester; quorum 1",
        "expiry: after 7 d, it ends as expired (the agent is told so): DEFAULT_EXPIRY, as the rule sets none",
    ]


@pytest.mark.parametrize(
    ("expiry", "tool", "environment", "said"),
    [
        ("{after: 1h, outcome: keep}", "deploy", {}, "expiry: after 1 h, the thread is told, and it stays pending"),
        ("never", "deploy", {}, "expiry: never (it waits until someone decides)"),
        (
            "never",
            "read_logs",
            {"DEFAULT_EXPIRY": "36h"},
            "expiry: after 36 h, it ends as expired (the agent is told so): DEFAULT_EXPIRY, as the default section "
            "sets none",
        ),
    ],
)
def test_it_shows_the_expiry_the_call_gets_and_whether_it_is_the_default(
    tmp_path: Path, expiry: str, tool: str, environment: dict[str, str], said: str
) -> None:
    policy = write(tmp_path, f"rules:\n  - name: deploys\n    match: {{tools: [deploy]}}\n    expiry: {expiry}\n")
    ran = run_bot(["policy", "check", str(policy), "--tool", tool], **environment)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1] == said


def test_a_default_expiry_of_never_is_refused_naming_the_setting(policy: Path) -> None:
    ran = run_bot(["policy", "check", str(policy), "--tool", "x"], DEFAULT_EXPIRY="never")
    assert ran.returncode == 2
    assert "DEFAULT_EXPIRY: must be a duration: a rule that waits until decided says 'expiry: never'" in ran.stderr


def test_a_condition_without_an_answer_is_shown_read_the_stricter_way(policy: Path) -> None:
    status, out, _ = _check(policy, "--tool", "scale_service", "--input", '{"replicas": "many"}')
    assert status == 0
    assert "has no answer for this input, applies (tier deny): read the stricter way" in out
    assert "the agent is told: Past 10 replicas needs a capacity review." in out


def test_a_tool_no_rule_lists_gets_the_default(policy: Path) -> None:
    status, out, _ = _check(policy, "--tool", "read_logs")
    assert status == 0
    assert "  no rule lists the tool 'read_logs'\n  so the default applies\npolicy: default" in out


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--tool", "x", "--input", "[1"], "--input: not JSON"),
        (["--tool", "x", "--input", "[1]"], "--input: must be a JSON object"),
    ],
)
def test_bad_input_is_one_message_naming_the_argument(policy: Path, arguments: list[str], named: str) -> None:
    status, out, err = _check(policy, *arguments)
    assert (status, out) == (2, "")
    assert err.startswith(f"signoff: {named}")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("condition", "problem"),
    [
        ("arg.n > 1", "unknown name 'arg' (a condition sees only args, the call's input, and tool, its name)"),
        ('args.path.startswith("/tmp")', "unknown function 'startswith' (did you mean 'startsWith'?)"),
        ("sizee(args.hosts) > 1", "unknown function 'sizee' (did you mean 'size'?)"),
    ],
)
def test_a_policy_error_is_the_bots_own_message(tmp_path: Path, condition: str, problem: str) -> None:
    broken = write(tmp_path, f"rules:\n  - name: a\n    match: {{tools: [x], when: '{condition}'}}\n")
    status, _, err = _check(broken, "--tool", "x")
    assert status == 2
    assert err == f"signoff: {broken}, line 3, rules[0].match.when: {problem}\n"
