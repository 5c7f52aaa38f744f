"""The agent ``bench/chaos.py`` runs in the real bot processes (``AGENT_FACTORY=bench.chaos_agent:build_agent``).

The request names a shape and a ticket: ``chaos single 17`` asks for one gated change, ``chaos quorum 17``
for one change under the quorum rule, ``chaos pair 17`` for two gated changes in one turn (two approvals
in one round). Each real execution of a gated tool appends its ticket to the file named by
``CHAOS_EXECUTION_LOG`` (one line, appended atomically), so the bench can count executions per call.
"""

import os
import re
import time
from typing import Any, Final

from agent import Agent, ApprovalGate, ScriptedModel, tool
from agent.models.base import ModelTurn
from agent.models.scripted import text_turn, tool_turn
from state.shapes import Message

GATED_TOOLS: Final = ("chaos_change", "chaos_quorum_change")
FINAL_PREFIX: Final = "chaos finished"
_REQUEST: Final = re.compile(r"chaos (single|quorum|pair) (\w+)")
_WORK_S: Final = 0.05  # long enough for a kill to land mid-call now and then


def _log_execution(ticket: str) -> None:
    line = f"{ticket}\n".encode()
    descriptor = os.open(os.environ["CHAOS_EXECUTION_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line)  # one write of a short line with O_APPEND: never interleaved
    finally:
        os.close(descriptor)


@tool
def chaos_change(ticket: str) -> str:
    """Make a change (gated: one approval)."""
    time.sleep(_WORK_S)
    _log_execution(ticket)
    return f"{ticket}: changed"


@tool
def chaos_quorum_change(ticket: str) -> str:
    """Make a change (gated: a quorum of approvals)."""
    time.sleep(_WORK_S)
    _log_execution(ticket)
    return f"{ticket}: changed"


def _first_text(messages: list[Message]) -> str:
    for message in messages:
        if message["role"] == "user":
            for block in message["content"]:
                if "text" in block:
                    return str(block["text"])
    return ""


def _respond(messages: list[Message]) -> ModelTurn:
    if any("toolResult" in block for block in messages[-1]["content"]):
        match = _REQUEST.search(_first_text(messages))
        return text_turn(f"{FINAL_PREFIX} {match.group(2) if match else '?'}")
    match = _REQUEST.search(str(messages[-1]["content"][0].get("text", "")) if messages[-1]["content"] else "")
    if match is None:
        return text_turn("say: chaos single|quorum|pair <ticket>")
    shape, ticket = match.groups()
    if shape == "single":
        return tool_turn(("t1", "chaos_change", {"ticket": ticket}))
    if shape == "quorum":
        return tool_turn(("t1", "chaos_quorum_change", {"ticket": ticket}))
    return tool_turn(("t1", "chaos_change", {"ticket": f"{ticket}a"}), ("t2", "chaos_change", {"ticket": f"{ticket}b"}))


def build_agent(*, session_id: str, store: Any) -> Agent:
    """AGENT_FACTORY: one agent per thread, its gated tools logging every real execution."""
    return Agent(
        ScriptedModel(_respond),
        [chaos_change, chaos_quorum_change],
        hooks=[ApprovalGate(GATED_TOOLS)],
        session_id=session_id,
        store=store,
    )
