"""Running the decide script until it judges an attempt: what it says it lacks is supplied, then it runs again.

The script is the one judge of who may do what to a request: of decisions, and (as a check, writing nothing) of all
that decides nothing: a claim, a form opened, Discuss, App Home (``bot.flow.decisions``; ``check_attempt`` makes
such an attempt, ``ScriptJudge.checked`` reads each with its approval, ``ScriptJudge.verdicts`` judges approvals read
already). Python only supplies what Redis cannot know (who is in a channel or a user group, from Slack).

A run that answers ``needs`` writes nothing. What it lacks is a channel's or a user group's cached members (asked
of Slack here, into the copy the script reads: the session's shard's; while Slack cannot be asked, the members it
last listed; with none, the attempt is ``UNAVAILABLE`` whatever Slack failed with), or the request's real place (an
attempt on a session id that names none guessed it). A signed attempt's signature is recorded before Slack is asked,
so that a replay is refused whatever happens next.
"""

import logging
from dataclasses import dataclass, replace
from typing import Final, Literal

from bot.domain.call_errors import SLACK_CALL_ERRORS
from bot.domain.records import Decision
from bot.domain.status import Status
from bot.domain.workspaces import NotInstalled
from bot.flow.access import Origin
from bot.store import keys
from bot.store.approvals.approval_record import Approval, ApprovalDataError
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.decide_call import Attempt, DecideResult
from bot.store.scripts import ScriptRecord
from bot.store.signatures import SeenSignatures
from bot.store.workspaces.directory import Directory

logger = logging.getLogger(__name__)

Check = Literal["approve", "deny", "answer", "decide", "discuss"]
"""What a check asks: may the person approve, deny or answer; ``decide``: whichever the request takes (an answer to
a question, else an approval); ``discuss``: could they see it (decided or not)."""

_RUNS: Final = 5  # the request's real place, a cold channel cache, user groups to name, cold ones, then the verdict


@dataclass(frozen=True)
class ScriptJudge:
    """Runs the decide script on an attempt until it needs nothing more (see the module docstring)."""

    approvals: ApprovalStore
    """Where the script runs."""
    directory: Directory
    """Where a cold cache of members is filled from Slack."""
    signatures: SeenSignatures
    """Where a signed attempt's signature is recorded before Slack is asked."""

    def judge(
        self,
        attempt: Attempt,
        *,
        decision: Decision | None = None,
        update: ScriptRecord = (),
        audit: tuple[ScriptRecord, ...] = (),
        first: DecideResult | None = None,
    ) -> DecideResult:
        """The script's answer to ``attempt``, with the records ``ApprovalStore.decide`` writes if it decides.

        A check (``attempt.check``) takes no records. ``first``: the script's answer already had (a check read with its
        approval), that run is not sent again.

        Raises:
            ApprovalDataError: The stored approval cannot be read.
        """
        for _ in range(_RUNS):
            if first is None:
                result = self.approvals.decide(attempt, decision=decision, update=update, audit=audit)
            else:
                result, first = first, None
            if result.status not in (Status.NEEDS, Status.UNREADABLE):
                return result
            needs = result.needs
            unnamed = [str(group) for group in needs.get("groups", ()) if str(group) not in attempt.groups]
            if unnamed and needs.keys() == {"groups"}:
                # Named, a group's cached members are read by the script itself: Slack is asked only for cold ones.
                attempt = replace(attempt, groups=(*attempt.groups, *dict.fromkeys(unnamed)))
                continue
            if attempt.replay is not None:
                # The script recorded nothing; what follows (Slack, an error) may end without it running again.
                # Recorded now, a replay of this request is refused whatever happens next.
                if not self.signatures.first(
                    attempt.replay, remember_s=attempt.replay_ttl_s, shard=keys.shard_of(attempt.session_id)
                ):
                    return replace(result, status=Status.REPLAYED)
                attempt = replace(attempt, replay=None)
            if result.status is Status.UNREADABLE:
                self.approvals.get(attempt.session_id, attempt.approval_id)  # raises ApprovalDataError, saying why
                raise ApprovalDataError(f"approval_id=<{attempt.approval_id}> | stored approval is unreadable")
            try:
                shard = keys.shard_of(attempt.session_id)  # the caches the script reads are its shard's
                team_id = str(needs.get("team_id", attempt.team_id))  # the request's workspace, as the script read it
                if "members" in needs:
                    self.directory.in_channel(
                        team_id, str(needs["members"]), attempt.user, shard=shard
                    )  # fills the cache
                if "groups" in needs:
                    self.directory.members(team_id, [str(group) for group in needs["groups"]], shard=shard)  # idem
            except (*SLACK_CALL_ERRORS, NotInstalled) as error:  # Slack is down, or never listed them
                logger.warning("approval_id=<%s> | cannot resolve who may decide: %s", attempt.approval_id, error)
                return replace(result, status=Status.UNAVAILABLE)
            groups = tuple(dict.fromkeys((*attempt.groups, *(str(group) for group in needs.get("groups", ())))))
            attempt = replace(
                attempt,
                team_id=str(needs.get("team_id", attempt.team_id)),
                channel_id=str(needs.get("channel_id", attempt.channel_id)),
                groups=groups,
            )
        raise RuntimeError(f"approval_id=<{attempt.approval_id}> | the decide script kept asking for more")

    def checked(self, checks: list[Attempt]) -> list[tuple[Approval, Status] | None]:
        """Each check's approval and the script's verdict (``allowed`` or a refusal), read and judged in one round trip.

        ``None``: no such approval. What the script needs first (a cold cache, the request's real place) costs that
        check more runs.

        Raises:
            ApprovalDataError: An approval cannot be read back.
        """
        checked: list[tuple[Approval, Status] | None] = []
        for attempt, (approval, result) in zip(checks, self.approvals.read_and_check(checks), strict=True):
            judged = self.judge(attempt, first=result) if approval is not None else None
            checked.append((approval, judged.status) if approval is not None and judged is not None else None)
        return checked

    def verdicts(self, checks: list[Attempt]) -> list[Status | None]:
        """The script's verdict on each check of approvals already read (``allowed`` or a refusal), in one round trip.

        ``None``: no such approval, or it cannot be read. What the script needs first costs that check more runs.
        """
        verdicts: list[Status | None] = []
        for attempt, result in zip(checks, self.approvals.check_many(checks), strict=True):
            try:
                status = self.judge(attempt, first=result).status
            except ApprovalDataError:
                status = None
            verdicts.append(None if status in (None, Status.UNKNOWN) else status)
        return verdicts


def check_attempt(session_id: str, approval_id: str, *, user_id: str, action: Check, origin: Origin) -> Attempt:
    """The check-only attempt asking whether ``user_id`` may ``action`` the approval from ``origin`` now."""
    team_id, channel_id = origin.place_of(session_id)
    return Attempt(
        session_id=session_id,
        approval_id=approval_id,
        kind=action,
        user=user_id,
        team_id=team_id,
        channel_id=channel_id,
        origin=origin.fields(),
        check=True,
    )
