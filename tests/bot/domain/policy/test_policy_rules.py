"""One policy: its summary on a request, who it names, and the strictest policy a batch's calls get."""

from pathlib import Path

import pytest

from bot.domain.policy.policy import PolicyBook
from bot.domain.policy.policy_file import load_policy
from bot.domain.policy.policy_rules import Approvers, Policy
from bot.domain.records import PolicySummary
from tests.bot.support.policy_files import POLICIES, load_error


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
    assert policy.ends is not None
    assert (policy.ends.outcome, policy.ends.after) == ("deny", 7200)
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
    expiry = PolicyBook.model_validate(BATCH_BOOK).for_call(tool=None, interrupt_name="approval", batch=batch).ends
    assert (expiry.outcome, expiry.after) == expected if expiry else expected is None


def test_a_batch_under_several_restricting_rules_needs_someone_each_admits() -> None:
    book = PolicyBook.model_validate(BATCH_BOOK)
    policy = Policy.from_summary(
        book.for_call(tool=None, interrupt_name="approval", batch=["delete_files", "restart"]).summary()
    )
    # Who each list admits is judged by the decide script (tests/bot/flow/test_decisions.py: the cases with more lists).
    lists = [(approvers.users, approvers.usergroups) for approvers in (policy.approvers, *policy.also_approvers)]
    assert lists == [(("U0LEAD", "U0BOTH"), ()), (("U0BOTH",), ("S0SRE",))]
    assert policy.approvers_text() == "<@U0LEAD> or <@U0BOTH>, and also <@U0BOTH> or <!subteam^S0SRE>"


def test_a_rule_chooses_the_response_shape_and_a_bad_one_is_named(tmp_path: Path) -> None:
    book = PolicyBook.model_validate(
        {"rules": [{"name": "files", "match": {"tools": ["delete_files"]}, "response": "yes_no"}]}
    )
    assert book.for_call(tool="delete_files", interrupt_name="x").summary().response == "yes_no"
    assert book.default_policy.summary().response is None  # unset: what the interrupt's code reads
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
