"""Trust: a person approved a call to a tool and trusted that tool for the rest of the agent's session.

Strands' ``HumanInTheLoop(enable_trust=True)`` accepts ``"t"``: the call runs and the tool goes into the agent's
own state (``agent.state["hitl:trusted_tools"]``), so the agent never asks about it again in that session. Signoff
keeps its own record of each trust (``bot.store.access.trusts``): App Home lists it as a standing approval of that
session, and revoking it removes the record; before the session's agent next runs, the worker removes from the
agent's state every trusted tool Signoff holds no record of (``bot.flow.agent_abilities.TrustsTools``).
"""

from datetime import datetime

from pydantic import BaseModel, ConfigDict


class Trust(BaseModel):
    """One tool trusted for the rest of one session."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    tool: str
    trusted_by: str
    """Who approved the call and trusted the tool."""
    requester: str
    """Whose request the agent works on in that session ("" for nobody)."""
    team_id: str
    channel_id: str
    thread_ts: str
    approval_id: str
    """The approval whose decision trusted it."""
    trusted_at: datetime

    def may_revoke(self, user_id: str) -> bool:
        """Who may end it from Slack: the person who trusted the tool, or the requester of the session."""
        return user_id in (self.trusted_by, self.requester) and bool(user_id)
