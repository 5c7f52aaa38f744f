"""Who may decide under a policy: listed users and groups, never the requester unless the policy allows it."""

import pytest

from bot.domain.authorization import Verdict, authorize
from bot.domain.policy_rules import Approvers, Policy

NO_GROUPS: dict[str, frozenset[str]] = {}

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
