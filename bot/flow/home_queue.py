"""What a person's App Home shows: their queue (what they may decide now, oldest first) and recent decisions.

A person sees only what they may decide (the request's policy allows them and they are in its
channel, or were sent a copy) and decisions they could already see (their channel's, or ones
they requested, decided or were sent).

``HomeTab`` gathers it (open approvals, who may decide them, the latest decisions, the viewer's
standing approvals) when a person opens the tab and after every change that can alter a queue;
``bot.render.home_view`` lays it out. It also lists what waits in one channel, for ``/approvals``.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.domain.records import ApprovalRequest
from bot.flow.base import Flow
from bot.flow.grants import GrantFlow
from bot.render import blocks
from bot.render.home_view import RECENT_SHOWN, home_view
from bot.store.approval_record import Approval
from bot.store.decide_call import RECENT_KEPT


def progress_of(approval: Approval) -> blocks.Progress:
    """What a pending approval's message shows besides the request."""
    until = (
        datetime.fromtimestamp(approval.claimed_until_ms / 1000, approval.request.created_at.tzinfo)
        if approval.claimed_until_ms is not None
        else None
    )
    return blocks.Progress(
        votes=tuple(sorted(approval.votes)),
        claimed_by=approval.claimed_by,
        claimed_until=until,
        level=approval.level,
        edit=approval.edit,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class HomeTab(Flow):
    """Builds a person's App Home from Redis."""

    grants: GrantFlow

    def view_for(self, user_id: str, *, team_id: str) -> dict[str, Any]:
        """The home view of ``user_id`` in ``team_id``.

        It shows the requests of that workspace they may decide now, and its recent decisions they could see (a person
        in two workspaces sees each one's in its own tab).
        """
        queue = []
        for approval_id in self.stores.approvals.open_everywhere():
            approval = self.stores.approvals.find_readable(approval_id)
            if approval is None or approval.decision is not None or user_id in approval.votes:
                continue
            if approval.request.team_id != team_id:
                continue
            allowed, _refusal = self.decisions.may_decide(approval, user_id=user_id)
            if allowed:
                queue.append((approval.request, progress_of(approval)))
        recent = []
        for approval_id in self.stores.approvals.recent_decisions(limit=RECENT_KEPT):
            approval = self.stores.approvals.find_readable(approval_id)
            if approval is None or approval.decision is None or approval.request.team_id != team_id:
                continue
            if self.decisions.may_see(approval, user_id=user_id):
                recent.append((approval.request, approval.decision))
                if len(recent) == RECENT_SHOWN:
                    break
        grants = self.grants.live_for(user_id, team_id=team_id)
        return home_view(queue=queue, recent=recent, now=self.clock(), grants=grants)

    def pending_in(self, team_id: str, channel_id: str) -> list[ApprovalRequest]:
        """The requests waiting for a decision in one channel, oldest first (``/approvals`` lists them)."""
        pending = []
        for approval_id in self.stores.approvals.open_in_channel(team_id, channel_id):
            approval = self.stores.approvals.find_readable(approval_id)
            if approval is not None and approval.decision is None:
                pending.append(approval.request)
        return pending
