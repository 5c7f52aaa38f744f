"""Real Strands agents behind Signoff (the optional ``strands`` extra; the only package importing ``strands``).

- ``RedisSessionRepository``: Strands' ``SessionRepository`` on Signoff's Redis (same session ids
  and hash tags as ``state.store``, compare-and-set updates), mirrored into the bot's session store.
- ``signoff_session_manager``: a ``RepositorySessionManager`` built on it.
- ``SignoffGate``: a Strands hook provider raising the ``"approval"`` interrupt the bot renders,
  and applying the human's ``Decision`` on resume.
- ``StrandsRunnable``: what the bot's runner drives when ``AGENT_FACTORY`` returns a ``strands.Agent``.
- ``MultiAgentRunnable``: what it drives when ``AGENT_FACTORY`` returns a Strands ``Swarm`` or ``Graph``.
"""

from agent.strands_bridge.gate import PolicyFor, SignoffGate
from agent.strands_bridge.multi_agent import MultiAgentRunnable, is_multi_agent
from agent.strands_bridge.multi_agent_records import SignoffSide
from agent.strands_bridge.records import CorruptedSessionError, RecordConflictError, strands_key
from agent.strands_bridge.repository import DEFAULT_AGENT_ID, RedisSessionRepository
from agent.strands_bridge.runner import StrandsRunnable, is_strands_agent, signoff_session_manager, to_agent_result

__all__ = [
    "DEFAULT_AGENT_ID",
    "CorruptedSessionError",
    "MultiAgentRunnable",
    "PolicyFor",
    "RecordConflictError",
    "RedisSessionRepository",
    "SignoffGate",
    "SignoffSide",
    "StrandsRunnable",
    "is_multi_agent",
    "is_strands_agent",
    "signoff_session_manager",
    "strands_key",
    "to_agent_result",
]
