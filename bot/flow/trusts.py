"""Ending a trust from Slack (``bot.domain.trusts``): who may, and the audit record that says who did."""

from bot.domain.trusts import Trust
from bot.store.access.trusts import TrustStore
from bot.store.audit import Audit


def revoke_trust(
    trusts: TrustStore, audit: Audit, session_id: str, tool: str, *, user_id: str, team_id: str
) -> Trust | None:
    """End the trust of ``tool`` in ``session_id`` if ``user_id`` of ``team_id`` may; the trust it was, or ``None``.

    Only a person of the session's own workspace who made it, or whose request the session serves, may end it. The
    agent asks about the tool again before its next call once the session's agent next runs (the worker removes the
    tool from the agent's own list then: ``bot.flow.agent_abilities.TrustsTools.keep_trusted``).
    """
    trust = trusts.get(session_id, tool)
    if trust is None or trust.team_id != team_id or not trust.may_revoke(user_id):
        return None
    ended = trusts.revoke(session_id, tool)
    if ended is not None:
        audit.record("trust_revoked", session_id=session_id, actor=user_id, tool=tool, approval_id=trust.approval_id)
    return ended
