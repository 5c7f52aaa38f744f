"""The approval policy file: loading, checking (with lines and field paths), matching and authorization."""

import textwrap
from pathlib import Path

import pytest

from agent.demo import RISKY_TOOLS
from bot.domain.policy import Approvers, Match, Policy, PolicyBook, Rule, Verdict, authorize
from bot.domain.policy_file import PolicyError, PolicyProblem, load_policy
from bot.domain.records import PolicySummary

ROOT = Path(__file__).resolve().parents[3]
POLICIES = Path(__file__).resolve().parents[1] / "support" / "policies"

NO_GROUPS: dict[str, frozenset[str]] = {}


def write(tmp_path: Path, text: str, name: str = "policy.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_error(path: Path) -> PolicyError:
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    return caught.value


# --- loading -----------------------------------------------------------------------------------


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


def test_the_example_policy_loads_and_gates_the_demo_tools() -> None:
    book = load_policy(ROOT / "policy.example.yml")

    for tool in RISKY_TOOLS:
        policy = book.for_call(tool=tool, interrupt_name="approval", tool_input={"service": "api", "replicas": 4})
        assert policy.name != "default", tool
        assert not policy.approvers.is_open, tool
        assert policy.allow_self_approval is False, tool
        assert policy.reason_required_on_deny is (tool == "rollback_deploy"), tool
    assert book.for_call(tool="read_logs", interrupt_name="approval").name == "default"
    huge = book.for_call(tool="scale_service", interrupt_name="approval", tool_input={"replicas": 30})
    assert (huge.name, huge.tier) == ("huge-scale", "deny")
    # Every tool the example names is a real demo tool (no typo that would leave one on the default).
    assert {tool for rule in book.rules for tool in rule.match.tools} == set(RISKY_TOOLS)


def test_a_yaml_suffix_and_upper_case_suffixes_are_accepted(tmp_path: Path) -> None:
    text = "rules:\n  - name: r\n    match: {tools: [t]}\n"
    assert load_policy(write(tmp_path, text, "p.yaml")).rules[0].name == "r"
    assert load_policy(write(tmp_path, text, "p.YML")).rules[0].name == "r"


# --- matching ----------------------------------------------------------------------------------


def test_a_tool_rule_wins_over_an_earlier_interrupt_rule() -> None:
    book = load_policy(POLICIES / "full.yml")

    # "scaling" (third) matches the interrupt "approval"; "production-changes" (first) the tool.
    assert book.for_call(tool="restart_service", interrupt_name="approval").name == "production-changes"
    assert book.for_call(tool="rollback_deploy", interrupt_name="budget").name == "production-changes"
    assert book.for_call(tool="scale_service", interrupt_name="budget").name == "scaling"


def test_without_a_tool_match_the_interrupt_name_decides() -> None:
    book = load_policy(POLICIES / "full.yml")

    assert book.for_call(tool="read_logs", interrupt_name="approval").name == "scaling"
    assert book.for_call(tool=None, interrupt_name="spend").name == "budget"
    assert book.for_call(tool=None, interrupt_name="budget").name == "budget"


def test_the_first_matching_rule_wins() -> None:
    book = PolicyBook(
        rules=(
            Rule(name="first", match=Match(tools=("a",))),
            Rule(name="second", match=Match(interrupts=("a",))),
        )
    )

    assert book.for_call(tool="a", interrupt_name="a").name == "first"
    assert book.for_call(tool=None, interrupt_name="a").name == "second"


def test_nothing_matching_gets_the_files_default_named_default() -> None:
    book = load_policy(POLICIES / "full.yml")

    policy = book.for_call(tool="read_logs", interrupt_name="other")

    assert policy == Policy(
        name="default",
        approvers=Approvers(users=("U0DEFAULT1",), usergroups=("S0DEFAULT1",)),
        allow_self_approval=True,
        reason_required_on_deny=False,
    )
    # A tool name is not an interrupt name and vice versa.
    assert book.for_call(tool="budget", interrupt_name="other").name == "default"
    assert book.for_call(tool=None, interrupt_name="restart_service").name == "default"


def test_the_built_in_default_lets_anyone_but_the_requester_decide_without_a_reason() -> None:
    book = PolicyBook.default()

    assert book.rules == ()
    policy = book.for_call(tool="rollback_deploy", interrupt_name="approval")
    assert policy.summary() == PolicySummary(name="default")
    assert policy.approvers.is_open
    assert policy.approvers_text() == "anyone in the channel except the requester"


def test_a_summary_records_the_policy_and_converts_back() -> None:
    rule = load_policy(POLICIES / "full.yml").rules[0]

    summary = rule.summary()

    assert summary == PolicySummary(
        name="production-changes",
        approver_users=("U0ALICE01", "W0BOB0001"),
        approver_groups=("S0ONCALL1",),
        allow_self_approval=False,
        reason_required_on_deny=True,
    )
    restored = Policy.from_summary(summary)
    assert restored.summary() == summary
    assert restored.approvers == rule.approvers


# --- errors ------------------------------------------------------------------------------------


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


def test_building_a_book_in_code_checks_the_same_rules() -> None:
    with pytest.raises(ValueError, match=r"tool 'x' is matched by both rule 'a' and rule 'b'"):
        PolicyBook(rules=(Rule(name="a", match=Match(tools=("x",))), Rule(name="b", match=Match(tools=("x",)))))
    with pytest.raises(ValueError, match=r"not a Slack user id"):
        Approvers(users=("alice",))


# --- authorization -----------------------------------------------------------------------------

OPEN = Policy(name="default")
OPEN_SELF = Policy(name="default", allow_self_approval=True)
LISTED = Policy(name="ops", approvers=Approvers(users=("U0ALICE01",), usergroups=("S0ONCALL1",)))
LISTED_SELF = LISTED.model_copy(update={"allow_self_approval": True})
ONCALL = {"S0ONCALL1": frozenset({"U0CAROL01", "U0DAVE001"})}


def test_an_open_policy_lets_anyone_but_the_requester_decide() -> None:
    text = "anyone in the channel except the requester"
    assert authorize(OPEN, user_id="U0ANYONE1", requester_id="U0ASKER01", group_members=NO_GROUPS) == Verdict(
        True, "allowed", text
    )
    assert authorize(OPEN, user_id="U0ASKER01", requester_id="U0ASKER01", group_members=NO_GROUPS) == Verdict(
        False, "self_approval", text
    )


def test_an_open_policy_with_self_approval_lets_everyone_decide() -> None:
    verdict = authorize(OPEN_SELF, user_id="U0ASKER01", requester_id="U0ASKER01", group_members=NO_GROUPS)

    assert verdict == Verdict(True, "allowed", "anyone in the channel")


def test_a_listed_user_may_decide() -> None:
    verdict = authorize(LISTED, user_id="U0ALICE01", requester_id="U0ASKER01", group_members=ONCALL)

    assert verdict == Verdict(True, "allowed", "<@U0ALICE01> or <!subteam^S0ONCALL1>")


def test_a_member_of_a_listed_group_may_decide() -> None:
    verdict = authorize(LISTED, user_id="U0CAROL01", requester_id="U0ASKER01", group_members=ONCALL)

    assert verdict.allowed
    assert verdict.reason_code == "allowed"


def test_someone_neither_listed_nor_in_a_listed_group_may_not() -> None:
    other_group = {"S0ONCALL1": frozenset({"U0CAROL01"}), "S0OTHER01": frozenset({"U0EVE0001"})}

    verdict = authorize(LISTED, user_id="U0EVE0001", requester_id="U0ASKER01", group_members=other_group)

    assert verdict == Verdict(False, "not_an_approver", "<@U0ALICE01> or <!subteam^S0ONCALL1>")


def test_an_unresolved_group_counts_as_empty() -> None:
    verdict = authorize(LISTED, user_id="U0CAROL01", requester_id="U0ASKER01", group_members=NO_GROUPS)

    assert verdict.reason_code == "not_an_approver"


@pytest.mark.parametrize("requester", ["U0ALICE01", "U0CAROL01"])
def test_self_approval_is_refused_even_to_an_approver(requester: str) -> None:
    verdict = authorize(LISTED, user_id=requester, requester_id=requester, group_members=ONCALL)

    assert verdict == Verdict(False, "self_approval", "<@U0ALICE01> or <!subteam^S0ONCALL1>")


@pytest.mark.parametrize("requester", ["U0ALICE01", "U0CAROL01"])
def test_self_approval_is_allowed_to_an_approver_when_the_policy_says_so(requester: str) -> None:
    verdict = authorize(LISTED_SELF, user_id=requester, requester_id=requester, group_members=ONCALL)

    assert verdict == Verdict(True, "allowed", "<@U0ALICE01> or <!subteam^S0ONCALL1>")


def test_allowing_self_approval_does_not_make_the_requester_an_approver() -> None:
    verdict = authorize(LISTED_SELF, user_id="U0EVE0001", requester_id="U0EVE0001", group_members=ONCALL)

    assert verdict.reason_code == "not_an_approver"


@pytest.mark.parametrize(
    ("approvers", "expected"),
    [
        (Approvers(users=("U0ALICE01",)), "<@U0ALICE01>"),
        (Approvers(usergroups=("S0ONCALL1",)), "<!subteam^S0ONCALL1>"),
        (Approvers(users=("U0ALICE01", "W0BOB0001")), "<@U0ALICE01> or <@W0BOB0001>"),
        (
            Approvers(users=("U0ALICE01", "W0BOB0001"), usergroups=("S0ONCALL1", "S0SRE0001")),
            "<@U0ALICE01>, <@W0BOB0001>, <!subteam^S0ONCALL1> or <!subteam^S0SRE0001>",
        ),
        (Approvers(users=("U0ALICE01", "U0ALICE01")), "<@U0ALICE01>"),
    ],
)
def test_approvers_text_mentions_users_and_groups_in_mrkdwn(approvers: Approvers, expected: str) -> None:
    assert Policy(name="p", approvers=approvers).approvers_text() == expected


def test_an_interrupt_guarding_a_batch_is_judged_by_every_call_s_policy_at_once() -> None:
    """Authorized: a call matching no tool rule brings the interrupt-name rule (or the default) in."""
    book = PolicyBook.model_validate(
        {
            "rules": [
                {"name": "deploys", "match": {"tools": ["deploy"]}, "approvers": {"users": ["U0LEAD"]}},
                {"name": "asks", "match": {"interrupts": ["batch-approval"]}, "reason_required_on_deny": True},
            ]
        }
    )
    both = book.for_call(tool=None, interrupt_name="batch-approval", batch=["notify", "deploy"])
    assert both.name == "deploys + asks"
    assert (both.approvers, both.reason_required_on_deny) == (Approvers(users=("U0LEAD",)), True)
    assert book.for_call(tool=None, interrupt_name="batch-approval", batch=["deploy", "notify"]) == both
    assert book.for_call(tool=None, interrupt_name="x", batch=["deploy", "deploy"]).name == "deploys"
    assert book.for_call(tool=None, interrupt_name="batch-approval", batch=["notify"]).name == "asks"
    assert book.for_call(tool=None, interrupt_name="other", batch=["notify"]).name == "default"
    assert book.for_call(tool=None, interrupt_name="other", batch=["notify", "deploy"]).name == "deploys + default"


BATCH_BOOK = {
    "rules": [
        {
            "name": "reads",
            "match": {"tools": ["read_logs"]},
            "allow_self_approval": True,
            "low_risk": True,
            "reminders": {"every": "10m"},
            "expiry": {"after": "1h", "outcome": "approve"},
            "response": "yes_no",
        },
        {
            "name": "deletes",
            "match": {"tools": ["delete_files"]},
            "approvers": {"users": ["U0LEAD", "U0BOTH"]},
            "quorum": 2,
            "reminders": {"every": "30m"},
            "escalation": {"levels": [{"after": "15m", "targets": {"users": ["U0ONCALL"]}}]},
            "claim": {"pause": "20m"},
        },
        {
            "name": "restarts",
            "match": {"tools": ["restart"]},
            "approvers": {"users": ["U0BOTH"], "usergroups": ["S0SRE"]},
            "reason_required_on_deny": True,
            "expiry": {"after": "2h", "outcome": "deny"},
        },
        {
            "name": "low",
            "match": {"tools": ["list_files"]},
            "low_risk": True,
            "expiry": {"after": "3h", "outcome": "approve"},
        },
    ]
}


def test_a_batch_gets_the_strictest_of_its_calls_policies() -> None:
    book = PolicyBook.model_validate(BATCH_BOOK)
    policy = book.for_call(tool=None, interrupt_name="approval", batch=["restart", "read_logs", "delete_files"])
    assert policy.name == "reads + deletes + restarts"
    assert policy.allow_self_approval is False
    assert policy.reason_required_on_deny is True
    assert policy.quorum == 2
    assert policy.low_risk is False
    assert policy.expiry is not None
    assert (policy.expiry.outcome, policy.expiry.after) == ("deny", 7200)
    assert policy.reminders is not None
    assert policy.reminders.every == 600
    assert policy.escalation == book.rules[1].escalation
    assert policy.claim == book.rules[1].claim
    assert policy.response == "yes_no"
    summary = policy.summary()
    assert Policy.from_summary(summary).summary().model_dump(include={"approver_users", "also_approvers"}) == (
        summary.model_dump(include={"approver_users", "also_approvers"})
    )


@pytest.mark.parametrize(
    ("batch", "expected"),
    [
        (["read_logs", "list_files"], ("approve", 10800)),  # every rule approves on expiry: the latest
        (["read_logs", "delete_files"], None),  # one has no expiry: it waits for a human
        (["read_logs", "restart"], ("deny", 7200)),
    ],
)
def test_a_batch_approves_on_expiry_only_if_every_call_s_rule_does(
    batch: list[str], expected: tuple[str, int] | None
) -> None:
    expiry = PolicyBook.model_validate(BATCH_BOOK).for_call(tool=None, interrupt_name="approval", batch=batch).expiry
    assert (expiry.outcome, expiry.after) == expected if expiry else expected is None


def test_a_batch_under_several_restricting_rules_needs_someone_each_admits() -> None:
    book = PolicyBook.model_validate(BATCH_BOOK)
    policy = Policy.from_summary(
        book.for_call(tool=None, interrupt_name="approval", batch=["delete_files", "restart"]).summary()
    )
    sre = {"S0SRE": frozenset({"U0LEAD", "U0SRE"})}
    assert policy.usergroups == ("S0SRE",)

    def allowed(user: str, groups: dict[str, frozenset[str]]) -> bool:
        return authorize(policy, user_id=user, requester_id="U0REQ", group_members=groups).allowed

    assert allowed("U0BOTH", NO_GROUPS)
    assert not allowed("U0LEAD", NO_GROUPS)
    assert allowed("U0LEAD", sre)  # listed by one rule, in the other's group
    assert not allowed("U0SRE", sre)  # in one rule's group only
    assert policy.approvers_text() == "<@U0LEAD> or <@U0BOTH>, and also <@U0BOTH> or <!subteam^S0SRE>"


def test_a_rule_chooses_the_response_shape_and_a_bad_one_is_named(tmp_path: Path) -> None:
    book = PolicyBook.model_validate(
        {"rules": [{"name": "files", "match": {"tools": ["delete_files"]}, "response": "yes_no"}]}
    )
    assert book.for_call(tool="delete_files", interrupt_name="x").summary().response == "yes_no"
    assert book.default_policy.summary().response == "record"
    path = tmp_path / "policy.yml"
    path.write_text("rules:\n  - name: files\n    match: {tools: [delete_files]}\n    response: y/n\n")
    message = str(load_error(path))
    assert "line 4, rules[0].response" in message
    assert "'record', 'yes_no' or 'boolean'" in message


def test_a_batch_s_message_names_every_rule_and_every_list_of_approvers() -> None:
    from bot.render.texts import approval_request

    book = PolicyBook.model_validate(BATCH_BOOK)
    summary = book.for_call(tool=None, interrupt_name="approval", batch=["restart", "delete_files"]).summary()
    assert approval_request.policy_line(summary) == (
        "Policy *deletes + restarts* · May decide: one of <@U0LEAD>, <@U0BOTH>; and one of <@U0BOTH>, "
        "<!subteam^S0SRE> (not the requester) · A reason is required to deny"
    )
