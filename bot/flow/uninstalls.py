"""The app was removed from a workspace: forget its installation and end what waits there.

Slack says so with ``app_uninstalled`` or ``tokens_revoked``.

Each pending request of that workspace expires, saying why (the agent is resumed with it, an API client told
it); nothing of another workspace is read for more than its team, nothing of it is changed.
"""

import logging
from typing import Final

from bot.domain.status import Status
from bot.flow.decisions import DecisionService
from bot.store.approvals import ApprovalStore
from bot.store.audit import Audit
from bot.store.home_viewers import HomeViewers
from bot.store.installations import Installations

logger = logging.getLogger(__name__)

UNINSTALLED: Final = "uninstalled: the app was removed from this workspace"
"""The reason an expiry gives when the app was uninstalled (what the agent and an API client read)."""


class Uninstalls:
    """Ends a workspace's installation and its pending requests."""

    def __init__(
        self,
        *,
        installations: Installations,
        approvals: ApprovalStore,
        decisions: DecisionService,
        viewers: HomeViewers,
        audit: Audit,
    ) -> None:
        """Keep the collaborators."""
        self._installations = installations
        self._approvals = approvals
        self._decisions = decisions
        self._viewers = viewers
        self._audit = audit

    def uninstalled(self, *, team_id: str, enterprise_id: str | None) -> int:
        """Forget ``team_id``'s installation, expire its pending requests; return how many expired."""
        self._installations.delete_installation(enterprise_id=enterprise_id, team_id=team_id or None)
        expired = 0
        if team_id:
            for approval_id in self._approvals.open_everywhere():
                approval = self._approvals.find_readable(approval_id)
                if approval is None or approval.decision is not None or approval.request.team_id != team_id:
                    continue
                outcome = self._decisions.expire(approval, outcome="deny", why=UNINSTALLED, source="uninstall")
                expired += outcome.status is Status.DECIDED
            self._viewers.forget_team(team_id)
        self._audit.record("uninstalled", actor="slack", team=team_id, enterprise=enterprise_id or "", expired=expired)
        logger.info("team_id=<%s> | uninstalled: %d pending requests expired", team_id, expired)
        return expired
