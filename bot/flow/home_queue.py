"""Who sees what on App Home: a person's queue (what they may decide now, oldest first) and recent decisions.

A person sees only what they may decide (the request's policy allows them and they are in its
channel, or were sent a copy) and decisions they could already see (their channel's, or ones
they requested, decided or were sent): the decide script judges both, as checks from the tab
(``bot.flow.home_checks``).

``HomeQueue.contents_for`` gathers it (open approvals, who may decide them, the latest decisions, the viewer's
standing approvals) when a person opens the tab and after a change that can alter their tab (``viewers_of``);
``bot.render.home_view`` lays it out. It also lists what waits in one channel, for ``/approvals``.
"""

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from bot.domain.call_errors import SLACK_CALL_ERRORS
from bot.domain.grants import ListedGrant
from bot.domain.progress import Progress
from bot.domain.records import ApprovalRequest, Decision
from bot.domain.trusts import Trust
from bot.domain.workspaces import NotInstalled
from bot.flow.base import Flow
from bot.flow.grants import GrantFlow
from bot.render.home_view import RECENT_SHOWN
from bot.store.access.trusts import TrustStore
from bot.store.approvals.approval_listings import Seen
from bot.store.approvals.approval_record import Approval
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.decide_call import RECENT_KEPT
from bot.store.workspaces.directory import Directory
from bot.store.workspaces.home_viewers import HomeViewers

logger = logging.getLogger(__name__)

OPEN_READ: Final = 100
"""How many waiting requests App Home reads from each of a person's indexes (the tab shows 15 at most)."""
PENDING_READ: Final = 50
"""How many of a channel's waiting requests ``/approvals`` reads (its answer shows what fits in one message)."""


@dataclass(frozen=True)
class HomeContents:
    """What one person's App Home holds, as ``bot.render.home_view.home_view`` takes it."""

    queue: list[tuple[ApprovalRequest, Progress]]
    """What they may decide now, oldest first, each with what happened to it so far."""
    recent: list[tuple[ApprovalRequest, Decision]]
    """Decisions they could see, newest first."""
    grants: list[ListedGrant]
    """Their standing approvals, each with how often it was used (and those being revoked)."""
    trusts: list[Trust]
    """The tools trusted for the rest of a session that they made, or that serve their requests."""
    now: datetime
    """When it was gathered (how long each request has waited)."""
    queue_read_whole: bool = True
    """``False`` when an index held more than was read (``OPEN_READ``): more may wait than ``queue`` holds."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HomeQueue(Flow):
    """Chooses, from Redis, what a person's App Home shows them (and what waits in a channel)."""

    approvals: ApprovalStore
    trusts: TrustStore
    home_viewers: HomeViewers
    grants: GrantFlow
    directory: Directory

    def contents_for(self, user_id: str, *, team_id: str) -> HomeContents:
        """What the App Home of ``user_id`` in ``team_id`` shows.

        The requests of that workspace they may decide now, and its recent decisions they could see (a person
        in two workspaces sees each one's in its own tab). Read from their own indexes and their workspace's, a
        bounded page each: the rules that name them, the copies sent to them, the channels they are in, the
        workspace's longest waiting, their own decisions and requests, the workspace's latest.
        """
        approvals = self.approvals
        # Whoever may decide is named by its rule, was sent a copy, or is in the request's channel.
        channels = {
            channel_id: shards
            for channel_id, shards in approvals.channels_waiting(team_id).items()
            if self._in(team_id, channel_id, user_id)
        }
        seen: Seen = {}  # an approval two pages list is read once
        pages = [
            approvals.open_for_approver(team_id, user_id, limit=OPEN_READ, seen=seen),
            approvals.open_copied_to(team_id, user_id, limit=OPEN_READ, seen=seen),
            approvals.open_in_channels(team_id, channels, limit=OPEN_READ, seen=seen),
            approvals.open_in_workspace(team_id, limit=OPEN_READ, seen=seen),
        ]
        # A full page may have left more unread: the tab's count of the rest is then a floor, not a total.
        read_whole = all(len(page) < OPEN_READ for page in pages)
        waiting = _by_id([approval for page in pages for approval in page])
        waiting.sort(key=lambda approval: approval.request.created_at)
        decided = [
            approval
            for approval in _by_id(
                [
                    *approvals.decided_for(team_id, user_id, limit=RECENT_SHOWN, seen=seen),
                    *approvals.decided_in_workspace(team_id, limit=RECENT_KEPT, seen=seen),
                ]
            )
            if approval.decision is not None
        ]
        decided.sort(
            key=lambda approval: approval.decision.decided_at if approval.decision else self.clock(), reverse=True
        )
        may_decide, may_see = self.decisions.home.for_home(user_id, team_id=team_id, waiting=waiting, decided=decided)
        # A vote counted is theirs already: what waits for others is not in their queue.
        queue = [(approval.request, approval.progress) for approval in may_decide if user_id not in approval.votes]
        recent = [(approval.request, approval.decision) for approval in may_see if approval.decision is not None]
        recent = recent[:RECENT_SHOWN]
        grants = self.grants.live_for(user_id, team_id=team_id)
        trusts = self.trusts.of_user(team_id, user_id)
        return HomeContents(
            queue=queue, recent=recent, grants=grants, trusts=trusts, now=self.clock(), queue_read_whole=read_whole
        )

    def viewers_of(self, approval: Approval) -> list[str]:
        """Who, of those who opened App Home lately in the approval's workspace, may find it on their tab.

        Judged as the tab is (``HomeChecks.who_may_find``, one round trip for them all: who may decide it while it
        waits, see it once decided), and who asked for it, voted on it or was sent it (their own act moves it on
        their tab): a change of ``approval`` alters no one else's tab.
        """
        request = approval.request
        involved = {request.requested_by, *approval.votes, *approval.copies}
        viewers = self.home_viewers.of_team(request.team_id)
        judged = self.decisions.home.who_may_find(approval, [user for user in viewers if user not in involved])
        return [user for user in viewers if user in involved or user in judged]

    def pending_in(self, team_id: str, channel_id: str) -> tuple[list[ApprovalRequest], int]:
        """What waits in one channel, for ``/approvals``: the ``PENDING_READ`` oldest, and how many wait in all."""
        approvals = self.approvals
        ids = approvals.open_in_channel(team_id, channel_id, limit=PENDING_READ)
        found = approvals.find_many_readable(ids)
        requests = [approval.request for approval in found if approval is not None and approval.decision is None]
        # Fewer than a page read: that is all of them (the count may still hold a stale entry the read dropped).
        waiting = approvals.waiting_in_channel(team_id, channel_id) if len(ids) >= PENDING_READ else len(requests)
        return requests, max(waiting, len(requests))

    def _in(self, team_id: str, channel_id: str, user_id: str) -> bool:
        """Whether ``user_id`` is in the channel (``False`` when it cannot be told now: the tab lists what it can)."""
        try:
            return self.directory.in_channel(team_id, channel_id, user_id)
        except (*SLACK_CALL_ERRORS, NotInstalled) as error:
            logger.warning("team_id=<%s>, channel_id=<%s> | cannot tell who is in it: %s", team_id, channel_id, error)
            return False


def _by_id(approvals: list[Approval]) -> list[Approval]:
    """``approvals`` without repeats (one read through two indexes), in their order."""
    first: dict[str, Approval] = {}
    for approval in approvals:
        first.setdefault(approval.request.approval_id, approval)
    return list(first.values())
