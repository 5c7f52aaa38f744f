"""Reading a policy file: YAML and TOML alike, and every problem reported with its line and field path."""

from pathlib import Path

import pytest

from bot.domain.policy.policy_file import PolicyProblem, load_policy
from bot.domain.policy.policy_rules import Approvers, Match
from tests.bot.support.policy_files import POLICIES, load_error, problem_cases, write


def test_yaml_and_toml_spellings_of_one_policy_load_to_equal_books() -> None:
    from_yaml = load_policy(POLICIES / "full.yml")
    from_toml = load_policy(POLICIES / "full.toml")

    assert from_yaml == from_toml
    assert from_yaml.default_settings.approvers == Approvers(users=("U0DEFAULT1",), usergroups=("S0DEFAULT1",))
    assert from_yaml.default_settings.allow_self_approval is True
    assert [rule.name for rule in from_yaml.rules] == ["production-changes", "budget", "scaling"]
    production = from_yaml.rules[0]
    assert production.match == Match(tools=("restart_service", "rollback_deploy"))
    assert production.approvers == Approvers(users=("U0ALICE01", "W0BOB0001"), usergroups=("S0ONCALL1",))
    assert (production.allow_self_approval, production.reason_required_on_deny) == (False, True)
    assert from_yaml.rules[1].match == Match(interrupts=("budget", "spend"))
    assert from_yaml.rules[2].match == Match(tools=("scale_service",), interrupts=("approval",))


def test_a_yaml_suffix_and_upper_case_suffixes_are_accepted(tmp_path: Path) -> None:
    text = "rules:\n  - name: r\n    match: {tools: [t]}\n"
    assert load_policy(write(tmp_path, text, "p.yaml")).rules[0].name == "r"
    assert load_policy(write(tmp_path, text, "p.YML")).rules[0].name == "r"


@pytest.mark.parametrize(("text", "expected"), problem_cases("yaml"))
def test_a_yaml_error_names_the_file_line_field_and_problem(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)

    error = load_error(path)

    assert str(error) == f"{path}, {expected}"
    assert error.file == path
    assert isinstance(error, ValueError)


def test_every_problem_is_reported_with_its_own_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        default:
          approvers: {users: [nobody]}
        rules:
          - name: a
            match: {tools: [x]}
            allow_self_approval: maybe
        """,
    )

    error = load_error(path)

    assert error.problems == (
        PolicyProblem(
            "'nobody' is not a Slack user id (U or W, then capital letters and digits, e.g. U012AB3CD)",
            field="default.approvers.users[0]",
            line=2,
        ),
        PolicyProblem("expected true or false, got 'maybe'", field="rules[0].allow_self_approval", line=6),
    )
    assert str(error).splitlines() == [
        f"{path}, line 2, default.approvers.users[0]: 'nobody' is not a Slack user id "
        "(U or W, then capital letters and digits, e.g. U012AB3CD)",
        f"{path}, line 6, rules[0].allow_self_approval: expected true or false, got 'maybe'",
    ]


@pytest.mark.parametrize(("text", "expected"), problem_cases("toml"))
def test_a_toml_error_names_the_file_field_and_line(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text, "policy.toml")

    error = load_error(path)

    assert str(error) == f"{path}, {expected}"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("policy.yml", ""),
        ("policy.yml", "# only a comment\n\n"),
        ("policy.yaml", "{}\n"),
        ("policy.toml", ""),
        ("policy.toml", "# only a comment\n"),
    ],
)
def test_an_empty_file_is_an_error(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")

    error = load_error(path)

    assert str(error) == f"{path}: the policy file is empty (expected 'default' and/or 'rules')"


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "absent.yml"

    assert str(load_error(path)) == f"{path}: no such policy file"


def test_an_unknown_extension_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, '{"rules": []}', "policy.json")

    assert str(load_error(path)) == f"{path}: unknown policy file type '.json'; use .yml, .yaml or .toml"


def test_a_file_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "policy.yml"
    path.write_bytes(b"default:\n  approvers: {users: [\xff]}\n")

    assert str(load_error(path)) == f"{path}: not UTF-8 text (invalid start byte at byte 31)"
