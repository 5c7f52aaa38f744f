"""Standing approvals: "Approve + allow 1 h" on an approval message, and Revoke on App Home (grants and trusts)."""

import logging
from collections.abc import Callable

from slack_bolt import Ack, App

from bot.flow.grants import Granted, GrantFlow
from bot.flow.trusts import revoke_trust
from bot.render import action_ids as ids
from bot.render.texts import answers, standing_approvals
from bot.slack.edge.payloads import Action, BlockActions
from bot.slack.listeners.feedback import click_origin, clicker, outcome_text, tell, tell_clicker
from bot.store.access.trusts import TrustStore
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, home_refresh

logger = logging.getLogger(__name__)


def approving_and_allowing(*, flow: GrantFlow, outbox: Outbox) -> Callable[[BlockActions, Action], None]:
    """What serves an "Approve + allow 1 h" click (``bot.slack.listeners.actions`` acks it first)."""

    def approve_and_allow(body: BlockActions, action: Action) -> None:
        who = clicker(body)
        parsed = ids.parse_grant_button_value(str(action.get("value", "")))
        if parsed is None:
            tell(
                outbox,
                team_id=who.team,
                channel=who.channel,
                user=who.user,
                text=answers.unknown_approval(),
            )
            return
        seconds, approval_id, session_id, shown = parsed
        granted = flow.approve_and_allow(
            approval_id,
            session_id=session_id,
            user_id=who.user,
            seconds=seconds,
            origin=click_origin(body),
            shown=shown,
        )
        tell_clicker(outbox, who, granted_text(granted))

    return approve_and_allow


def register(app: App, *, flow: GrantFlow, trusts: TrustStore, audit: Audit, outbox: Outbox) -> None:
    """Add the Revoke listeners of App Home (grants and trusts) to ``app``."""

    def revoke(ack: Ack, body: BlockActions, action: Action) -> None:
        ack()
        who = clicker(body)
        user = who.user
        team_id, channel_id, grant_id = ids.parse_revoke_button_value(str(action.get("value", "")))
        # Only a button of the workspace it was clicked in ends anything.
        revoked = flow.revoke_as(team_id, channel_id, grant_id, user_id=user) if team_id == who.team else None
        if revoked is None:
            text = standing_approvals.grant_gone()
        elif revoked.finished:
            text = standing_approvals.grant_revoked(revoked.grant.tool)
        else:
            text = standing_approvals.grant_revoke_unfinished(revoked.grant.tool)
        tell(outbox, team_id=who.team, channel=None, user=user, text=text)
        outbox.want_home(home_refresh(user, team_id=who.team))

    def revoke_trust_click(ack: Ack, body: BlockActions, action: Action) -> None:
        ack()
        who = clicker(body)
        session_id, tool = ids.parse_revoke_trust_button_value(str(action.get("value", "")))
        ended = revoke_trust(trusts, audit, session_id, tool, user_id=who.user, team_id=who.team)
        text = standing_approvals.trust_gone() if ended is None else standing_approvals.trust_revoked(ended.tool)
        tell(outbox, team_id=who.team, channel=None, user=who.user, text=text)
        outbox.want_home(home_refresh(who.user, team_id=who.team))

    app.action(ids.REVOKE_GRANT_ACTION)(revoke)
    app.action(ids.REVOKE_TRUST_ACTION)(revoke_trust_click)


def granted_text(granted: Granted) -> str:
    """What the person who asked for a standing approval is told."""
    if not granted.offered:
        return standing_approvals.grant_not_offered()
    if granted.edited:
        return standing_approvals.grant_not_for_edited()
    if granted.grant is not None and granted.request is not None:
        fields = list(granted.grant.fields) if granted.grant.fields else None
        return standing_approvals.grant_made(granted.request, until=granted.grant.expires_at, fields=fields)
    return outcome_text(granted.outcome) or answers.unknown_approval()
