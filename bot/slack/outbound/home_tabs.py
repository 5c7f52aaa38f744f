"""App Home tabs through the outbox: publish a person's tab, and ask for the rebuilds a change of a request calls for.

A change rebuilds only the tabs that can show the request (``HomeQueue.viewers_of``), each at most once per
``cooling_s`` (``HOME_REFRESH_SECONDS``): asks merge into one outbox entry per person (``Outbox.want_home``), and a
change that comes while a tab is built is shown by that entry once the window has passed (``Outbox.complete_home``).
"""

from dataclasses import dataclass

from bot.domain.workspaces import SlackClients
from bot.flow.home_queue import HomeQueue
from bot.render.home_view import home_view
from bot.store.approvals.approval_record import Approval
from bot.store.queues.outbox import Outbox, OutboxEntry, home_refresh


@dataclass(frozen=True, slots=True, kw_only=True)
class HomeTabs:
    """Publishes App Home tabs (a ``publish_home`` entry) and asks for them to be rebuilt."""

    home_queue: HomeQueue
    clients: SlackClients
    outbox: Outbox
    cooling_s: float

    def publish(self, entry: OutboxEntry) -> bool:
        """Build and publish the tab ``entry`` names, then complete the entry (or keep it for a later change)."""
        user, slack = entry.payload["user"], self.clients.for_team(entry.team_id)
        home = self.home_queue.contents_for(user, team_id=entry.team_id)
        view = home_view(
            queue=home.queue,
            recent=home.recent,
            now=home.now,
            grants=home.grants,
            trusts=home.trusts,
            queue_read_whole=home.queue_read_whole,
        )
        slack.views_publish(user_id=user, view=view)
        self.outbox.complete_home(entry, cooling_s=self.cooling_s)
        return True  # settled here: the deliverer must not complete it again

    def rebuild_for(self, approval: Approval) -> None:
        """Ask for a rebuild of each App Home that can show ``approval`` (the asks in one round trip)."""
        team_id = approval.request.team_id
        self.outbox.want_home(*(home_refresh(user, team_id=team_id) for user in self.home_queue.viewers_of(approval)))
