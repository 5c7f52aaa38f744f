"""What App Home may show: approvals already read, judged by the decide script as checks from the tab.

A person's tab lists what they may decide now (``decide``) and decided requests they could see (``discuss``), as
a click from that tab would be judged (``bot.flow.judge``). The approvals were read once, through the indexes
(``HomeQueue.contents_for``) or by the change that calls for rebuilds (``HomeQueue.viewers_of``): each batch of
checks is one round trip, whatever it holds, and reads nothing again.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from bot.domain.status import Status
from bot.flow.access import Origin
from bot.flow.judge import Check, ScriptJudge, check_attempt
from bot.store.approvals.approval_record import Approval
from bot.store.approvals.decide_call import Attempt


@dataclass(frozen=True)
class HomeChecks:
    """Judges approvals for App Home tabs: one person's candidates, or one approval for many people."""

    judge: ScriptJudge

    def for_home(
        self, user_id: str, *, team_id: str, waiting: Sequence[Approval], decided: Sequence[Approval]
    ) -> tuple[list[Approval], list[Approval]]:
        """What ``user_id``'s App Home in ``team_id`` may list, judged in one round trip.

        Of ``waiting``, what they may decide now; of ``decided``, what they could see. In order; approvals of other
        workspaces, unknown or unreadable ones left out.
        """
        candidates = [
            (approval, _action(approval))
            for approval in (
                *(each for each in waiting if each.decision is None),
                *(each for each in decided if each.decision is not None),
            )
            if approval.request.team_id == team_id
        ]
        checks = [_check(approval, user_id, action, team_id) for approval, action in candidates]
        may_decide: list[Approval] = []
        may_see: list[Approval] = []
        for (approval, action), verdict in zip(candidates, self.judge.verdicts(checks), strict=True):
            if verdict is Status.ALLOWED:
                (may_decide if action == "decide" else may_see).append(approval)
        return may_decide, may_see

    def who_may_find(self, approval: Approval, users: Sequence[str]) -> list[str]:
        """Of ``users``, who would find ``approval`` on their App Home, in order: one round trip for them all.

        Who may decide it while it waits; who could see it once decided.
        """
        team_id, action = approval.request.team_id, _action(approval)
        checks = [_check(approval, user, action, team_id) for user in users]
        return [
            user for user, verdict in zip(users, self.judge.verdicts(checks), strict=True) if verdict is Status.ALLOWED
        ]


def _action(approval: Approval) -> Check:
    """What a tab offers: to decide what waits, to see (discuss) what was decided."""
    return "decide" if approval.decision is None else "discuss"


def _check(approval: Approval, user_id: str, action: Check, team_id: str) -> Attempt:
    request = approval.request
    origin = Origin("home", team_id, team_id)
    return check_attempt(request.session_id, request.approval_id, user_id=user_id, action=action, origin=origin)
