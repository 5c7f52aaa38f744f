"""Turns what ``AGENT_FACTORY`` returns into an agent the runner can drive.

The runner needs: ``interrupted``, ``state`` (``get``/``set``), ``messages``, and a call that
takes a prompt or ``interruptResponse`` blocks and returns an ``agent.AgentResult``. Our
``agent.Agent`` has all of it; other runtimes are wrapped here.
"""

from typing import Any

from agent import Agent


def as_runnable(candidate: Any) -> Agent:
    """The agent itself, or an adapter around it.

    Raises:
        TypeError: The factory returned something the bot cannot run.
    """
    if isinstance(candidate, Agent):
        return candidate
    raise TypeError(f"agent_type=<{type(candidate).__qualname__}> | AGENT_FACTORY must return an agent.Agent")
