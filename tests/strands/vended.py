"""Agents using Strands' own human-in-the-loop pieces, written exactly as Strands' docs write them.

Nothing of Signoff is in them but ``signoff_session_manager``: no gate, no response key, no policy
rule. The ``HumanInTheLoop`` agents' model plays ``tests.strands.native.respond`` (``delete``,
``inspect`` or ``clean`` paths); the ``handoff_to_user`` agent's asks "Which region should I deploy
to?" and deploys where the person says. Tool runs are counted in Redis.
"""

from typing import Any

import strands
from strands.vended_interventions.hitl import HumanInTheLoop
from strands.vended_tools import handoff_to_user

from agent import ScriptedModel
from agent.models.base import ModelTurn
from agent.models.scripted import text_turn, tool_turn
from agent.strands_bridge import signoff_session_manager
from state.shapes import Message
from state.store import SessionStore
from tests.bot.support.agents import count_completion
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


def trusting_agent(*, session_id: str, store: SessionStore) -> strands.Agent:
    """``HumanInTheLoop(allowed_tools=["inspect_files"], enable_trust=True)``: a person may trust ``delete_files``."""
    return hitl_agent(session_id=session_id, store=store, allowed_tools=["inspect_files"], enable_trust=True)


def hitl_agent_inspections_free(*, session_id: str, store: SessionStore) -> strands.Agent:
    """``HumanInTheLoop(allowed_tools=["inspect_files"])``: only deletions wait."""
    return hitl_agent(session_id=session_id, store=store, allowed_tools=["inspect_files"])


REGION_QUESTION = "Which region should I deploy to?"


def _results_since_prompt(messages: list[Message]) -> list[str]:
    start = max(
        i
        for i, message in enumerate(messages)
        if message["role"] == "user" and any("text" in block for block in message["content"])
    )
    return [
        content.get("text", "")
        for message in messages[start + 1 :]
        for block in message["content"]
        if "toolResult" in block
        for content in block["toolResult"]["content"]
    ]


def _ask_then_deploy(messages: list[Message]) -> ModelTurn:
    """Ask where (``handoff_to_user``), deploy there, then report what the deploy said."""
    results = _results_since_prompt(messages)
    if not results:
        return tool_turn(("h1", "handoff_to_user", {"message": REGION_QUESTION}))
    if len(results) == 1:
        return tool_turn(("d1", "deploy", {"region": results[0]}))
    return text_turn(results[-1])


def handoff_agent(*, session_id: str, store: SessionStore) -> strands.Agent:
    """``Agent(tools=[handoff_to_user, deploy])``: asks the person where, then deploys there."""

    @strands.tool
    def deploy(region: str) -> str:
        """Deploy the service.

        Args:
            region: Where to.
        """
        count_completion(store.client, "deploy")
        return f"deployed to {region!r}"

    return strands.Agent(
        model=StrandsScriptedModel(ScriptedModel(_ask_then_deploy)),
        tools=[handoff_to_user, deploy],
        session_manager=signoff_session_manager(session_id, store),
        callback_handler=None,
    )
