"""The policy book: which rule applies to a call, by its tool, its interrupt name, or the default."""

from pathlib import Path

import pytest

from agent.demo import RISKY_TOOLS
from bot.domain.policy.policy import PolicyBook
from bot.domain.policy.policy_file import load_policy
from bot.domain.policy.policy_rules import Approvers, Match, Policy, Rule
from bot.domain.records import PolicySummary
from tests.bot.support.policy_files import POLICIES

ROOT = Path(__file__).resolve().parents[4]


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


def test_building_a_book_in_code_checks_the_same_rules() -> None:
    with pytest.raises(ValueError, match=r"tool 'x' is matched by both rule 'a' and rule 'b'"):
        PolicyBook(rules=(Rule(name="a", match=Match(tools=("x",))), Rule(name="b", match=Match(tools=("x",)))))
    with pytest.raises(ValueError, match=r"not a Slack user id"):
        Approvers(users=("alice",))


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
