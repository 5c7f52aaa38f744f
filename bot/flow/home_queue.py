"""Who sees what on App Home: a person's queue (what they may decide now, oldest first) and recent decisions.

A person sees only what they may decide (the request's policy allows them and they are in its
channel, or were sent a copy) and decisions they could already see (their channel's, or ones
they requested, decided or were sent).

``HomeQueue.contents_for`` gathers it (open approvals, who may decide them, the latest decisions, the viewer's
standing approvals) when a person opens the tab and after a change that can alter their tab (``viewers_of``);
``bot.render.home_view`` lays it out. It also lists what waits in one channel, for ``/approvals``.
"""

from dataclasses import dataclass
from datetime import datetime

from bot.domain.grants import Grant
from bot.domain.progress import Progress
from bot.domain.records import ApprovalRequest, Decision
from bot.domain.trusts import Trust
from bot.flow.base import Flow
from bot.flow.grants import GrantFlow
from bot.render.home_view import RECENT_SHOWN
from bot.store.approval_record import Approval
from bot.store.decide_call import RECENT_KEPT


@dataclass(frozen=True)
class HomeContents:
    """What one person's App Home holds, as ``bot.render.home_view.home_view`` takes it."""

    queue: list[tuple[ApprovalRequest, Progress]]
    """What they may decide now, oldest first, each with what happened to it so far."""
    recent: list[tuple[ApprovalRequest, Decision]]
    """Decisions they could see, newest first."""
    grants: list[tuple[Grant, int]]
    """Their standing approvals, each with how often it was used."""
    trusts: list[Trust]
    """The tools trusted for the rest of a session that they made, or that serve their requests."""
    now: datetime
    """When it was gathered (how long each request has waited)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HomeQueue(Flow):
    """Chooses, from Redis, what a person's App Home shows them (and what waits in a channel)."""

    grants: GrantFlow

    def contents_for(self, user_id: str, *, team_id: str) -> HomeContents:
        """What the App Home of ``user_id`` in ``team_id`` shows.

        The requests of that workspace they may decide now, and its recent decisions they could see (a person
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
                queue.append((approval.request, approval.progress))
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
        trusts = self.stores.trusts.of_user(team_id, user_id)
        return HomeContents(queue=queue, recent=recent, grants=grants, trusts=trusts, now=self.clock())

    def viewers_of(self, approval: Approval) -> list[str]:
        """Who, of those who opened App Home lately in the approval's workspace, may see it there.

        Home's queue shows a request only to who may decide it, its recent decisions only to who may see them
        (``may_see``, which deciding needs too): a change of ``approval`` alters no one else's tab.
        """
        viewers = self.stores.home_viewers.of_team(approval.request.team_id)
        return [user for user in viewers if self.decisions.may_see(approval, user_id=user)]

    def pending_in(self, team_id: str, channel_id: str) -> list[ApprovalRequest]:
        """The requests waiting for a decision in one channel, oldest first (``/approvals`` lists them)."""
        pending = []
        for approval_id in self.stores.approvals.open_in_channel(team_id, channel_id):
            approval = self.stores.approvals.find_readable(approval_id)
            if approval is not None and approval.decision is None:
                pending.append(approval.request)
        return pending
