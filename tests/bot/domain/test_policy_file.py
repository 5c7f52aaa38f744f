"""Reading a policy file: YAML and TOML alike, and every problem reported with its line and field path."""

from pathlib import Path

import pytest

from bot.domain.policy_file import PolicyProblem, load_policy
from bot.domain.policy_rules import Approvers, Match
from tests.bot.support.policy_files import POLICIES, load_error, write


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            """
            rules:
              - name: ops
                match: {tools: [restart_service]}
                approvers:
                  users: [U0ALICE01, bob]
            """,
            "line 5, rules[0].approvers.users[1]: 'bob' is not a Slack user id "
            "(U or W, then capital letters and digits, e.g. U012AB3CD)",
            id="user-id",
        ),
        pytest.param(
            """
            default:
              approvers:
                usergroups:
                  - S0ONCALL1
                  - U0ALICE01
            """,
            "line 5, default.approvers.usergroups[1]: 'U0ALICE01' is not a Slack user group id "
            "(S, then capital letters and digits, e.g. S0614TZR7)",
            id="usergroup-id",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match: {tools: [x]}
              - name: b
                match: {tools: [x]}
                approvers:
                  users: [u0lower]
            """,
            "line 7, rules[1].approvers.users[0]: 'u0lower' is not a Slack user id "
            "(U or W, then capital letters and digits, e.g. U012AB3CD)",
            id="field-errors-come-before-cross-rule-checks",
        ),
        pytest.param(
            """
            default:
              reason_required_on_deny: false
            rule:
              - name: a
            """,
            "line 3, rule: unknown key 'rule' (expected one of: default, rotations, rules)",
            id="unknown-top-level-key",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match: {tools: [x]}
              - name: b
                match: {tools: [y]}
                approvers:
                  user: [U0ALICE01]
            """,
            "line 7, rules[1].approvers.user: unknown key 'user' (expected one of: usergroups, users)",
            id="unknown-nested-key",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match: {tools: [x], tool: [y]}
            """,
            "line 3, rules[0].match.tool: unknown key 'tool' (expected one of: interrupts, tools, when)",
            id="unknown-key-in-flow-mapping",
        ),
        pytest.param(
            """
            default:
              allow_self_approval: "yes"
            """,
            "line 2, default.allow_self_approval: expected true or false, got 'yes'",
            id="quoted-boolean",
        ),
        pytest.param(
            """
            default:
              reason_required_on_deny: 1
            """,
            "line 2, default.reason_required_on_deny: expected true or false, got 1",
            id="number-for-boolean",
        ),
        pytest.param(
            """
            default:
              approvers:
                users: U0ALICE01
            """,
            "line 3, default.approvers.users: expected a list, got 'U0ALICE01'",
            id="string-for-list",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match:
                  tools: [restart_service, 7]
            """,
            "line 4, rules[0].match.tools[1]: expected a string, got 7",
            id="number-for-tool-name",
        ),
        pytest.param(
            """
            default:
            rules: []
            """,
            "line 1, default: expected a mapping of keys, got an empty value",
            id="empty-section",
        ),
        pytest.param(
            """
            - name: a
            """,
            "line 1: expected a mapping of keys, got a list",
            id="top-level-list",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match: {tools: [x]}
              - name: b
                approvers: {}
            """,
            "line 4, rules[1].match: required key is missing",
            id="missing-match",
        ),
        pytest.param(
            """
            rules:
              - match: {tools: [x]}
            """,
            "line 2, rules[0].name: required key is missing",
            id="missing-name",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match:
                  tools: []
                  interrupts: []
            """,
            "line 3, rules[0].match: a rule must match at least one tool or interrupt name",
            id="empty-match",
        ),
        pytest.param(
            """
            rules:
              - name: has space
                match: {tools: [x]}
            """,
            "line 2, rules[0].name: 'has space' is not a valid rule name (1 to 63 letters, digits, '-', '_' or "
            "'.', starting with a letter or digit)",
            id="rule-name-syntax",
        ),
        pytest.param(
            """
            rules:
              - name: default
                match: {tools: [x]}
            """,
            "line 2, rules[0].name: 'default' is reserved for the default policy; pick another name",
            id="reserved-rule-name",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match: {tools: ["restart service"]}
            """,
            "line 3, rules[0].match.tools[0]: 'restart service' is not a valid name "
            "(no whitespace or control characters)",
            id="tool-name-with-space",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match: {tools: ["restart\\0service"]}
            """,
            "line 3, rules[0].match.tools[0]: 'restart\\x00service' is not a valid name "
            "(no whitespace or control characters)",
            id="tool-name-with-a-control-character",
        ),
        pytest.param(
            """
            rules:
              - name: ops
                match: {tools: [x]}
              - name: other
                match: {tools: [y]}
              - name: ops
                match: {tools: [z]}
            """,
            "line 6, rules[2].name: rule name 'ops' is already used by rules[0]",
            id="duplicate-rule-name",
        ),
        pytest.param(
            """
            rules:
              - name: production
                match:
                  tools: [restart_service, rollback_deploy]
              - name: rollbacks
                match:
                  tools:
                    - scale_service
                    - rollback_deploy
            """,
            "line 9, rules[1].match.tools[1]: tool 'rollback_deploy' is matched by both rule 'production' "
            "and rule 'rollbacks'",
            id="tool-in-two-rules",
        ),
        pytest.param(
            """
            rules:
              - name: budget
                match: {interrupts: [budget]}
              - name: money
                match: {interrupts: [budget]}
            """,
            "line 5, rules[1].match.interrupts[0]: interrupt name 'budget' is matched by both rule 'budget' "
            "and rule 'money'",
            id="interrupt-in-two-rules",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match: {tools: [x, y, x]}
            """,
            "line 3, rules[0].match.tools[2]: tool 'x' is listed twice",
            id="tool-listed-twice-in-one-rule",
        ),
        pytest.param(
            """
            default:
              allow_self_approval: true
            rules: []
            default:
              allow_self_approval: false
            """,
            "line 4, default: duplicate key 'default' (first at line 1)",
            id="duplicate-yaml-key",
        ),
        pytest.param(
            """
            rules:
              - name: a
                match: {tools: [x]
            default: {}
            """,
            "line 4: not valid YAML: while parsing a flow mapping (started at line 3), expected ',' or '}', "
            "but got '<scalar>'",
            id="yaml-syntax",
        ),
        pytest.param(
            """
            default: {}
            ---
            rules: []
            """,
            "line 2: not valid YAML: expected a single document in the stream (started at line 1), "
            "but found another document",
            id="two-yaml-documents",
        ),
    ],
)
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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            """
            [default.approvers]
            users = ["U0ALICE01"]

            [[rules]]
            name = "a"
            match.tools = ["x"]

            [[rules]]
            name = "b"
            [rules.match]
            tools = ["y"]
            [rules.approvers]
            usergroups = ["S0OK", "bad"]
            """,
            "line 13, rules[1].approvers.usergroups[1]: 'bad' is not a Slack user group id "
            "(S, then capital letters and digits, e.g. S0614TZR7)",
            id="array-of-tables",
        ),
        pytest.param(
            """
            [default]
            allow_self_approval = true
            reason_required = true
            """,
            "line 3, default.reason_required: unknown key 'reason_required' (expected one of: allow_external, "
            "allow_self_approval, approvers, channel, claim, edits, escalation, expiry, grants, low_risk, quorum, "
            "reason_required_on_deny, reminders, response)",
            id="unknown-key",
        ),
        pytest.param(
            """
            [[rules]]
            name = "a"
            match = { tools = ["x"] }

            [[rules]]
            name = "b"
            match = { tools = ["x"] }
            """,
            "line 7, rules[1].match.tools[0]: tool 'x' is matched by both rule 'a' and rule 'b'",
            id="inline-table",
        ),
        pytest.param(
            """
            [[rules]]
            name = "a"
            allow_self_approval = false
            """,
            "line 1, rules[0].match: required key is missing",
            id="missing-key-points-at-its-table",
        ),
        pytest.param(
            """
            [default]
            allow_self_approval = "no"
            """,
            "line 2, default.allow_self_approval: expected true or false, got 'no'",
            id="quoted-boolean",
        ),
        pytest.param(
            """
            [default]
            allow_self_approval = nope
            """,
            "line 2: not valid TOML: Invalid value (at line 2, column 23)",
            id="toml-syntax",
        ),
    ],
)
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
