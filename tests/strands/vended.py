"""Agents using Strands' own human-in-the-loop pieces, written exactly as Strands' docs write them.

Nothing of Signoff is in them but ``signoff_session_manager``: no gate, no response key, no policy
rule. The model plays ``tests.strands.native.respond`` (``delete``, ``inspect`` or ``clean`` paths),
and tool runs are counted in Redis.
"""

from typing import Any

import strands
from strands.vended_interventions.hitl import HumanInTheLoop

from agent import ScriptedModel
from agent.strands_bridge import signoff_session_manager
from state.store import SessionStore
from tests.strands.agents import StrandsScriptedModel
from tests.strands.native import respond, strands_file_tools


def hitl_agent(
    *, session_id: str, store: SessionStore, allowed_tools: list[str] | None = None, **hitl: Any
) -> strands.Agent:
    """``Agent(interventions=[HumanInTheLoop(...)])``: every tool but ``allowed_tools`` waits for a human."""
    return strands.Agent(
        model=StrandsScriptedModel(ScriptedModel(respond)),
        tools=strands_file_tools(store),
        interventions=[HumanInTheLoop(allowed_tools=allowed_tools, **hitl)],
        session_manager=signoff_session_manager(session_id, store),
        callback_handler=None,
    )


def hitl_agent_inspections_free(*, session_id: str, store: SessionStore) -> strands.Agent:
    """``HumanInTheLoop(allowed_tools=["inspect_files"])``: only deletions wait."""
    return hitl_agent(session_id=session_id, store=store, allowed_tools=["inspect_files"])
