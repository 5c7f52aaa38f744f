"""Who may approve or deny a request: ``authorize``, pure, given the members of the user groups a policy lists.

Resolving those members through Slack is the caller's job (``bot.store.directory``).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from bot.domain.policy_rules import Policy

__all__ = ["Verdict", "authorize"]


@dataclass(frozen=True)
class Verdict:
    """Whether a user may decide on a request, and who may (for the message that says no)."""

    allowed: bool
    reason_code: Literal["allowed", "self_approval", "not_an_approver"]
    approvers_text: str


def authorize(
    policy: Policy, *, user_id: str, requester_id: str, group_members: Mapping[str, frozenset[str]]
) -> Verdict:
    """Whether ``user_id`` may approve or deny a request made by ``requester_id`` under ``policy``.

    The requester is refused unless the policy allows self-approval, even when listed as an
    approver. A policy combining several rules (a batch) needs ``user_id`` in each of its approver
    lists. ``group_members`` maps each of the policy's user groups (``policy.usergroups``) to its
    members; a group missing from it counts as empty (fails closed).
    """
    text = policy.approvers_text()
    if user_id == requester_id and not policy.allow_self_approval:
        return Verdict(False, "self_approval", text)
    if all(
        approvers.is_open
        or user_id in approvers.users
        or any(user_id in group_members.get(group, frozenset()) for group in approvers.usergroups)
        for approvers in (policy.approvers, *policy.also_approvers)
    ):
        return Verdict(True, "allowed", text)
    return Verdict(False, "not_an_approver", text)
