"""Making and ending standing approvals: "Approve + allow" on a request, Revoke on App Home or the CLI.

"Approve + allow 1 h" or "… similar" (its modal) make one; Revoke ends one.

A grant is made only by a person whose approval the decide script recorded (every check of a click applies:
place, policy, self-approval, replay), for a duration the request's own stored rule offers, covering exactly
the call they approved (``bot.domain.grants``). Using one is ``RoundPublisher``'s (a covered call is decided
in the transaction that opens it, unless a revoke fenced the use first: then people decide it).
"""

from dataclasses import dataclass
from datetime import timedelta

from bot.domain.clock import epoch_ms, offset_ms
from bot.domain.grants import (
    Grant,
    ListedGrant,
    deciders_digest,
    field_digests,
    new_grant_id,
    offers_similar,
    pattern_key,
)
from bot.domain.records import ApprovalRequest
from bot.domain.status import Status
from bot.flow.access import Origin
from bot.flow.base import Flow
from bot.flow.outcomes import Outcome
from bot.store.access.grants import GrantStore, Revoked
from bot.store.audit import Audit


@dataclass(frozen=True)
class Granted:
    """What an "Approve + allow" click did: the approval's outcome, and the grant if one was made."""

    outcome: Outcome
    grant: Grant | None = None
    request: ApprovalRequest | None = None
    """The request approved, when a grant was made with it."""
    offered: bool = True
    """False: the request's rule offers no grant of that duration (nothing was recorded)."""
    edited: bool = False
    """True: the click named an edited input, for which no grant is offered (nothing was recorded)."""


@dataclass(frozen=True)
class SimilarOpening:
    """What an "Approve + allow similar…" click opens: the request whose fields the person picks, or nothing.

    ``refusal`` says why nothing; ``None``: no such grant is offered for it.
    """

    request: ApprovalRequest | None = None
    refusal: Outcome | None = None
    edited: bool = False
    """True: the call was edited (or the click names another input): no grant is offered for it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GrantFlow(Flow):
    """Approve-and-allow (with the "allow similar" modal's opening), and revocation."""

    grants: GrantStore
    audit: Audit

    def open_similar(self, approval_id: str, *, user_id: str, origin: Origin, shown: str = "") -> SimilarOpening:
        """The modal an "Approve + allow similar…" click by ``user_id`` from ``origin`` opens.

        Offered to someone who may approve the call now (``DecisionService.find_checked``), when its rule offers a grant
        on fields they pick, and never for an edited call (``shown``: the digest of the input the button showed).
        """
        approval, refusal = self.decisions.find_checked(approval_id, user_id=user_id, action="approve", origin=origin)
        if approval is None or refusal is not None or not offers_similar(approval.request):
            return SimilarOpening(refusal=refusal)
        if approval.edit is not None or shown not in ("", approval.request.input_digest):
            return SimilarOpening(edited=True)  # its submission would be refused: say so before the form
        return SimilarOpening(approval.request)

    def approve_and_allow(
        self,
        approval_id: str,
        *,
        session_id: str | None,
        user_id: str,
        seconds: int,
        origin: Origin,
        shown: str = "",
        fields: tuple[str, ...] | None = None,
    ) -> Granted:
        """Approve as a click does; once recorded, allow the same call here for ``seconds`` (a duration offered).

        ``shown``: the digest of the input the button showed. An edited call is never granted: its Approve + allow
        buttons are gone, an older one's approval is refused (``changed``), and a click naming any input but the
        call's own is refused before anything is recorded (``edited``). ``fields``: the input's fields the person
        picked (a call with their values is covered whatever its others hold); ``None``: the exact input.
        """
        approval = self.decisions.find(approval_id)
        if approval is None:
            return Granted(Outcome(Status.UNKNOWN))
        request = approval.request
        if request.tool is None or request.call_digest is None or seconds not in request.policy.grant_durations:
            return Granted(Outcome(Status.UNKNOWN), offered=False)
        every_field = field_digests(request.tool, request.tool_input, client=request.client)
        if fields is not None and (not fields or any(name not in every_field for name in fields)):
            return Granted(Outcome(Status.UNKNOWN), offered=False)  # picked none, or what the input does not have
        # The grant covers the request's own input, so only an approval of that input may make one. The decide script
        # refuses an approval naming an input other than the one waiting, so once ``shown`` is the original's (or
        # names none, which an edited call refuses), the input approved is the one granted, whatever edits race.
        if shown not in ("", request.input_digest):
            return Granted(Outcome(Status.CHANGED, approval=approval), edited=True)
        outcome = self.decisions.decide(
            approval_id,
            session_id=session_id or request.session_id,
            user_id=user_id,
            kind="approve",
            reason=None,
            source="grant_button",
            origin=origin,
            shown=shown,
        )
        if outcome.status is not Status.DECIDED:  # refused, or decided already by someone: no grant
            return Granted(outcome)
        now = self.grants.now(clock_offset_ms=offset_ms(self.clock))  # the clock uses are checked against
        grant = Grant(
            grant_id=new_grant_id(),
            team_id=request.team_id,
            channel_id=request.channel_id,
            rule=request.policy.name,
            tool=request.tool,
            tool_input=request.tool_input if fields is None else {name: request.tool_input[name] for name in fields},
            digest=request.call_digest,
            fields=None if fields is None else {name: every_field[name] for name in fields},
            pattern=None if fields is None else pattern_key(request.tool, client=request.client),
            terms=deciders_digest(request.policy),
            requester=request.requested_by if request.policy.grant_scope == "requester" else None,
            granted_by=user_id,
            granted_at=now,
            expires_at=now + timedelta(seconds=seconds),
            granted_ms=epoch_ms(now),
            approval_id=approval_id,
        )
        self.grants.create(grant)
        self.audit.record(
            "grant",
            session_id=request.session_id,
            actor=user_id,
            grant=grant.grant_id,
            approval_id=approval_id,
            tool=grant.tool,
            channel=grant.channel_id,
            requester=grant.requester,
            until=grant.expires_at.isoformat(),
            fields=None if fields is None else list(fields),
        )
        return Granted(outcome, grant, request)

    def revoke(self, team_id: str, channel_id: str, grant_id: str, *, actor: str) -> Revoked | None:
        """End a grant now, or finish its revoke, audited once as ``actor``'s (``GrantStore.revoke``).

        Every call it has not decided yet is asked; what it did, or None (neither live nor being revoked).
        """
        return self.grants.revoke(team_id, channel_id, grant_id, actor=actor)

    def revoke_as(self, team_id: str, channel_id: str, grant_id: str, *, user_id: str) -> Revoked | None:
        """End a grant ``user_id`` may end from Slack (``may_revoke``), or finish its revoke (one not finished).

        Returns what the revoke did, or ``None`` if gone or not theirs to end.
        """
        grant = self.grants.held(team_id, channel_id, grant_id)
        if grant is None:
            self.grants.revoke(team_id, channel_id, grant_id)  # gone: its uses still listed in flight are fenced
            return None
        if not self.may_revoke(grant, user_id):
            return None
        return self.revoke(team_id, channel_id, grant_id, actor=user_id)

    def may_revoke(self, grant: Grant, user_id: str) -> bool:
        """Who may end a grant from Slack: the person who made it, or the requester it covers."""
        return user_id in (grant.granted_by, grant.requester)

    def live_for(self, user_id: str, *, team_id: str) -> list[ListedGrant]:
        """The live grants of ``team_id`` a person made or that cover their requests (and those being revoked)."""
        return [
            listed
            for listed in self.grants.live_of(team_id, user_id, now_ms=epoch_ms(self.clock()))
            if listed.grant.team_id == team_id and self.may_revoke(listed.grant, user_id)
        ]
