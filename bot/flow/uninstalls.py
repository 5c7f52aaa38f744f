"""The app was removed from a workspace, or from an Enterprise Grid org: forget its installation, end what waits.

Slack says so with ``app_uninstalled`` or ``tokens_revoked``; with ``team_access_revoked`` when an org admin takes
some workspaces away from the org-wide installation, which then ends in those as an uninstall would.

The listener only records what is owed (``bot.store.queues.owed_uninstalls``) and acks; a worker carries it out
(``carry_out``), however much waits. Each pending request of that workspace expires, saying why (the agent is resumed
with it, an API client told it); only that workspace's own index is read (``ApprovalStore.open_in_workspace``), a
page at a time. An org-wide install served every workspace of its org that a request came from
(``Installations.remember_org``, which notes each in the org's list) and that has no installation of its own: its
uninstall ends the pending requests of each of those.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from bot.domain.status import Status
from bot.domain.workspaces import SlackClients
from bot.flow.decisions import DecisionService
from bot.render.texts import decision_reasons
from bot.store.approvals.approvals import ApprovalStore
from bot.store.audit import Audit
from bot.store.queues.owed_uninstalls import OwedUninstall, OwedUninstalls
from bot.store.workspaces.home_viewers import HomeViewers
from bot.store.workspaces.installations import Installations

logger = logging.getLogger(__name__)

_PAGE: Final = 100  # requests of one workspace read at once (its own index: others' never are)


@dataclass(frozen=True, slots=True, kw_only=True)
class Uninstalls:
    """Ends an installation (a workspace's or an org's) and the pending requests it served."""

    installations: Installations
    approvals: ApprovalStore
    home_viewers: HomeViewers
    audit: Audit
    decisions: DecisionService
    clients: SlackClients
    owed: OwedUninstalls

    def carry_out_owed(self) -> int:
        """Carry out the uninstalls Slack was answered for (``bot.store.queues.owed_uninstalls``); return how many.

        One that fails stays owed: it is taken again when its lease runs out.
        """
        taken = self.owed.take()
        for owed_id, owed in taken:
            self.carry_out(owed)
            self.owed.done(owed_id)
        return len(taken)

    def carry_out(self, owed: OwedUninstall) -> int:
        """End what an uninstall event owes (``uninstalled`` or ``access_revoked``); return how many expired."""
        if owed.event == "team_access_revoked" and owed.enterprise_id:
            return self.access_revoked(enterprise_id=owed.enterprise_id, team_ids=owed.team_ids)
        return self.uninstalled(team_id=owed.team_id, enterprise_id=owed.enterprise_id, org_wide=owed.org_wide)

    def uninstalled(self, *, team_id: str, enterprise_id: str | None, org_wide: bool = False) -> int:
        """Forget the installation, expire the pending requests it served; return how many expired.

        ``org_wide``: the org-wide installation of ``enterprise_id`` went (``team_id`` is then one of its workspaces,
        or empty); else ``team_id``'s own.
        """
        if org_wide and enterprise_id:
            served = self.installations.org_teams(enterprise_id)
            noted = self._noted_for_org(enterprise_id, {team_id, *served})
            # Read before the org's installation goes: a workspace with its own installation keeps its requests.
            teams = self._served_by_org(enterprise_id, noted)
            self.installations.delete_org(enterprise_id, teams=noted)
            for team in noted:
                self.clients.forget(team)  # a client kept for one of them may hold the org's token
        else:
            self.installations.delete_installation(enterprise_id=enterprise_id, team_id=team_id or None)
            teams = {team_id} if team_id else set()
        return self._end(teams, enterprise_id=enterprise_id, event="uninstalled")

    def access_revoked(self, *, enterprise_id: str, team_ids: Iterable[str]) -> int:
        """An org admin took ``team_ids`` from the org-wide installation of ``enterprise_id``; return how many expired.

        Each of them that the installation served ends as its uninstall would; one it did not serve (never seen,
        another org's, or served by its own installation) keeps its requests, and only the org's note goes.
        """
        noted = self._noted_for_org(enterprise_id, set(team_ids))
        if not noted:
            logger.info("enterprise_id=<%s> | team access revoked: none of the workspaces was served", enterprise_id)
            return 0
        teams = self._served_by_org(enterprise_id, noted)
        self.installations.forget_org_of(enterprise_id, teams=noted)
        for team in noted:
            self.clients.forget(team)
        return self._end(teams, enterprise_id=enterprise_id, event="team_access_revoked")

    def _end(self, teams: set[str], *, enterprise_id: str | None, event: str) -> int:
        """Expire what waits in ``teams``, forget their App Home viewers; audit it as ``event``."""
        expired = sum(self._expire_in(team) for team in sorted(teams))
        for team in teams:
            self.home_viewers.forget_team(team)
            self.clients.forget(team)
        ended = ",".join(sorted(teams))
        self.audit.record(event, actor="slack", team=ended, enterprise=enterprise_id or "", expired=expired)
        logger.info(
            "team_id=<%s>, enterprise_id=<%s> | %s: %d pending requests expired", ended, enterprise_id, event, expired
        )
        return expired

    def _expire_in(self, team_id: str) -> int:
        """Expire every request waiting in ``team_id``, a page of its own index at a time; return how many expired.

        Each page is what still waits (an expired request leaves the index with its decision); one that cannot be
        expired (its round is over, a decision raced it) is passed over, so every page makes progress.
        """
        expired, passed = 0, set[str]()
        while True:
            page = self.approvals.open_in_workspace(team_id, limit=_PAGE + len(passed))
            waiting = [approval for approval in page if approval.request.approval_id not in passed]
            if not waiting:
                return expired
            for approval in waiting:
                outcome = self.decisions.expire(
                    approval, outcome="deny", why=decision_reasons.UNINSTALLED, source="uninstall"
                )
                if outcome.status is Status.DECIDED:
                    expired += 1
                else:
                    passed.add(approval.request.approval_id)

    def _noted_for_org(self, enterprise_id: str, teams: set[str]) -> set[str]:
        """Those of ``teams`` noted as served by the org-wide installation of ``enterprise_id`` (``remember_org``)."""
        return {team for team in teams if team and self.installations.org_serving(team) == enterprise_id}

    def _served_by_org(self, enterprise_id: str, teams: set[str]) -> set[str]:
        """Those of ``teams`` that the org-wide installation of ``enterprise_id`` serves, not one of their own."""
        installations = self.installations
        return {
            team
            for team in teams
            if (serving := installations.for_team(team)) is not None
            and serving.is_enterprise_install
            and serving.enterprise_id == enterprise_id
        }
